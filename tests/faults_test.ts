/**
 * Faults end to end (the scenario is in fault_scenario.ts; the benchmark runs a larger variant):
 * 10 % 5xx, bursts of 429, 3 s latency spikes, 10 % failed actions, random SIGKILLs of the CCM and
 * an apiserver restart after an etcd compaction, while 100 Services go through create/update/delete
 * and 50 nodes join or leave. After the faults stop, within 2 minutes: no load balancer without a
 * live Service, every LoadBalancer Service has its ingress and the right targets, no Node was
 * deleted while its server existed, and the routes match the pod CIDRs exactly. Then a hostile Service
 * naming another Service's balancer touches nothing, and a cloud that looks empty for 15 s while every
 * Node is NotReady deletes no Node.
 */
import { testEnvironment } from "../testing/ccm_harness.ts";
import { assert } from "../testing/assert.ts";
import { runFaultScenario } from "../testing/fault_scenario.ts";

Deno.test({
  name:
    "faults: 5xx, 429, latency spikes, failed actions, SIGKILLs and an apiserver restart leave no leak and converge",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, close } = await testEnvironment({ actionDurationMs: 200 });
    try {
      const result = await runFaultScenario(cluster, s.sim, {
        serviceCycles: 100,
        serviceBatch: 10,
        serviceStepMaxMs: 1_500,
        keptServices: 5,
        baseNodes: 10,
        nodeChanges: 50,
        nodeChangeGapMs: 500,
        killEveryMs: [4_000, 9_000],
        apiserverRestartsAtMs: [15_000],
        convergeWithinMs: 120_000,
        safetyPhases: { emptyForMs: 15_000 },
      });
      const figures = JSON.stringify({ ...result, lastOutput: undefined });
      console.log(`faults: ${figures}`);
      // The routes the CCM called most (with their answers): a request storm shows here.
      const calls = new Map<string, number>();
      for (const e of s.sim.audit) {
        calls.set(`${e.route} ${e.status}`, (calls.get(`${e.route} ${e.status}`) ?? 0) + 1);
      }
      const busiest = [...calls].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, n]) => `${n}× ${k}`);
      assert(
        result.problems.length === 0,
        `not converged within 2 minutes:\n  ${result.problems.join("\n  ")}\nfigures: ${figures}\n` +
          `busiest routes: ${busiest.join(", ")}\nlast CCM log:\n${result.lastOutput}`,
      );
      assert(
        result.hostileTouches === 0,
        `the hostile Service touched another balancer ${result.hostileTouches}×`,
      );
      assert(
        result.nodesDeletedWhenEmpty === 0,
        `${result.nodesDeletedWhenEmpty} Nodes deleted while the cloud looked empty`,
      );
      assert(result.kills >= 3, `the CCM was killed and restarted only ${result.kills} times`);
      assert(result.apiserverRestarts === 1, "the apiserver restarted");
      assert(
        result.injected5xx > 0 && result.injected429 > 0 && result.failedActions > 0 &&
          result.latencySpikes > 0,
        `every kind of fault happened: ${JSON.stringify({ ...result, lastOutput: undefined })}`,
      );
    } finally {
      await close();
    }
  },
});
