/**
 * The benchmark's `faults` scenario: the larger variant of tests/faults_test.ts (400 Service
 * cycles, 200 node changes on 40 nodes, two apiserver restarts with etcd compactions, the CCM
 * SIGKILLed every 10–25 s) at the benchmark's API latency and action duration.
 *
 * @module
 */
import { TestCluster } from "../testing/kube_cluster.ts";
import { type FaultScenarioOptions, runFaultScenario } from "../testing/fault_scenario.ts";
import { Simulator } from "../hcloud_sim/simulator.ts";
import type { ScenarioResult } from "./report.ts";

/** The sizes and fault pattern of the benchmark's variant. */
const OPTIONS: FaultScenarioOptions = {
  serviceCycles: 400,
  serviceBatch: 20,
  // Long enough for most load balancers to be created before their Service goes.
  serviceStepMaxMs: 8_000,
  keptServices: 20,
  baseNodes: 40,
  nodeChanges: 200,
  nodeChangeGapMs: 1_000,
  killEveryMs: [10_000, 25_000],
  apiserverRestartsAtMs: [30_000, 120_000],
  convergeWithinMs: 120_000,
  safetyPhases: { emptyForMs: 20_000 },
};

/**
 * Runs the scenario. Its 429s are injected, so `rate_limited_responses` counts only those for a
 * budget the CCM itself exhausted.
 */
export async function faultsScenario(latencyMs: number, actionMs: number): Promise<ScenarioResult> {
  const cluster = await TestCluster.start();
  const sim = new Simulator({ actionDurationMs: actionMs, latencyMs, quiet: true }).start();
  try {
    const r = await runFaultScenario(cluster, sim, OPTIONS);
    return {
      seconds_total: r.convergedSeconds,
      fault_seconds: Math.round(r.faultSeconds),
      requests: r.requests,
      rss_mb_peak: r.rssMbPeak,
      cpu_seconds: r.cpuSeconds,
      rate_limited_responses: sim.budgetExceeded,
      service_cycles: OPTIONS.serviceCycles,
      node_changes: OPTIONS.nodeChanges,
      kills: r.kills,
      apiserver_restarts: r.apiserverRestarts,
      apiserver_down_seconds: r.apiserverDownSeconds,
      injected_5xx: r.injected5xx,
      injected_429: r.injected429,
      latency_spikes: r.latencySpikes,
      failed_actions: r.failedActions,
      load_balancers_created: r.loadBalancersCreated,
      hostile_service_balancer_changes: r.hostileTouches,
      nodes_deleted_while_cloud_empty: r.nodesDeletedWhenEmpty,
      problems: r.problems,
    };
  } finally {
    await sim.stop();
    await cluster.stop();
  }
}
