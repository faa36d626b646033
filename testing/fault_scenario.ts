/**
 * The fault scenario, shared by `tests/faults_test.ts` and the benchmark's larger `faults` variant:
 * the simulator answers a share of 5xx, bursts of 429, latency spikes and failed actions, the CCM
 * process is SIGKILLed at random moments and restarted, the apiserver restarts after an etcd
 * compaction, while Services go through create/update/delete and nodes join or leave. Then the
 * faults stop and the scenario waits for every invariant to hold (see {@link invariants}).
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { TestCluster } from "./kube_cluster.ts";
import { adminClient, registerNode, setReady } from "./ccm_harness.ts";
import { type CcmProcess, spawnCcm } from "./ccm_process.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { pollUntil } from "./helpers.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { DEFAULT_SIM_TOKEN, type Simulator } from "../hcloud_sim/simulator.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/client.ts";
import { emptyCloudPhase, hostileServicePhase } from "./fault_phases.ts";
import { SERVICE_UID_LABEL } from "../providers/hcloud/mod.ts";
import { runSeed, seededRandom } from "../lib/random.ts";

/** Sizes and fault rates of one run. */
export interface FaultScenarioOptions {
  /** Services created, updated and deleted. */
  serviceCycles: number;
  /** How many of them run at once. */
  serviceBatch: number;
  /** Each Service waits a random time up to this before its update, and again before its deletion. */
  serviceStepMaxMs: number;
  /** LoadBalancer Services that stay (their state is checked at the end). */
  keptServices: number;
  /** Nodes present before the faults start. */
  baseNodes: number;
  /** Node joins and leaves, alternating (at most 2 × baseNodes + 200). */
  nodeChanges: number;
  /** Pause between node changes. */
  nodeChangeGapMs: number;
  /** The CCM is killed after a random pause in [min, max] ms, again and again. */
  killEveryMs: [number, number];
  /** Moments (ms after the faults start) of an etcd compaction followed by an apiserver restart. */
  apiserverRestartsAtMs: number[];
  /** How long the invariants may take to hold once the faults stop. */
  convergeWithinMs: number;
  /** Extra CCM flags. */
  ccmArgs?: string[];
  /** After converging: a hostile Service, then a cloud that looks empty for `emptyForMs`. */
  safetyPhases?: { emptyForMs: number };
  /**
   * The seed of the workload's random pauses (default: `SEED`, else a fresh one; the result names
   * it). Real processes and real time still interleave, so a seed replays the workload, not the run.
   */
  seed?: number;
}

/** What a run did and how it ended. */
export interface FaultScenarioResult {
  /** The workload's seed (`SEED=<n>` replays its choices). */
  seed: number;
  /** Seconds of faults (the workload's duration). */
  faultSeconds: number;
  /** Seconds from the faults stopping to every invariant holding, or undefined when they never did. */
  convergedSeconds?: number;
  /** Invariants still violated 10, 30 and 60 s after the faults stopped (at most 5 each). */
  openAfter: Record<string, string[]>;
  /** Violated invariants at the end (empty when converged). */
  problems: string[];
  /** Mutating calls the hostile Service caused on another Service's balancer (must be 0). */
  hostileTouches?: number;
  /** Nodes deleted while the cloud looked empty (must be 0). */
  nodesDeletedWhenEmpty?: number;
  kills: number;
  apiserverRestarts: number;
  /** Seconds the apiserver was down (stop plus start until ready), all restarts together. */
  apiserverDownSeconds: number;
  /** Cloud requests over the whole run, and the faults among their answers. */
  requests: number;
  injected5xx: number;
  injected429: number;
  latencySpikes: number;
  failedActions: number;
  /** Load balancers the simulator created and deleted during the run. */
  loadBalancersCreated: number;
  /** Peak RSS (the OS's VmHWM) of any CCM process in MB, and CPU seconds of all of them together. */
  rssMbPeak: number;
  cpuSeconds: number;
  /** The last CCM process's output (for failure messages). */
  lastOutput: string;
}

/** Retries a setup call through apiserver restarts. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0;; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i > 120) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lbService(name: string, port = 80): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default" },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ name: "p", port }] },
  };
}

/** Runs the scenario against a started cluster and simulator; the CCM processes are its own. */
export async function runFaultScenario(
  cluster: TestCluster,
  sim: Simulator,
  options: FaultScenarioOptions,
): Promise<FaultScenarioResult> {
  const seed = options.seed ?? runSeed();
  const random = seededRandom(seed);
  applySeed(sim, {
    networks: [{
      name: "k8s",
      ip_range: "10.0.0.0/8",
      subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
    }],
  });
  const client = await adminClient(cluster);
  const args = [
    `--kubeconfig=${cluster.kubeconfigPath}`,
    "--leader-elect=false",
    "--cluster-cidr=10.244.0.0/16",
    "--node-monitor-period=1s",
    "--route-reconciliation-period=2s",
    "--concurrent-service-syncs=5",
    ...options.ccmArgs ?? [],
  ];
  const env = {
    HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
    HCLOUD_ENDPOINT: sim.endpoint,
    HCLOUD_NETWORK: "k8s",
    HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
    HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
    // lb11 reaches 25 servers (label-selector matches beyond are ignored); these clusters are larger.
    HCLOUD_LOAD_BALANCERS_TYPE: "lb31",
  };
  const firstRequest = sim.audit.length;
  let ccm: CcmProcess = spawnCcm(args, env);
  const processes: CcmProcess[] = [ccm];
  const usage = new Map<CcmProcess, { rss: number; cpu: number }>();
  const sampler = setInterval(async () => {
    const current = ccm;
    const text = await current.get("/metrics").then((r) => r.text, () => "");
    const rss = Math.max(
      Number(text.match(/^process_resident_memory_bytes (\S+)/m)?.[1] ?? 0),
      current.peakRssBytes() ?? 0,
    );
    const cpu = Number(text.match(/^process_cpu_seconds_total (\S+)/m)?.[1] ?? 0);
    const last = usage.get(current) ?? { rss: 0, cpu: 0 };
    usage.set(current, { rss: Math.max(last.rss, rss), cpu: Math.max(last.cpu, cpu) });
  }, 1_000);
  let podIndex = 0;
  const live = new Map<string, number>(); // node name → server ID, for nodes that must stay
  const join = async (name: string) => {
    const server = sim.addServer({ name, location: "fsn1", private_net: [{ network: "k8s" }] });
    live.set(name, server.id);
    const pod = podIndex++;
    // Ready as a kubelet reports itself: the node lifecycle's breaker asks Ready Nodes whether the
    // cloud still shows their servers before it believes a burst of departures.
    const now = new Date().toISOString();
    const ready = { type: "Ready", status: "True", reason: "KubeletReady", lastHeartbeatTime: now };
    await retrying(() =>
      registerNode(client, name, {
        podCIDRs: [`10.244.${pod}.0/24`],
        status: { conditions: [{ ...ready, lastTransitionTime: now }] },
      })
    );
  };
  const leave = async (name: string) => {
    live.delete(name);
    const server = [...sim.world.servers.values()].find((x) => x.name === name)!;
    sim.control.deleteServer(server.id);
    await retrying(() => setReady(client, name, false));
  };
  const faults = {
    fiveXx: () => sim.audit.slice(firstRequest).filter((e) => e.status >= 500).length,
    rateLimited: sim.rateLimited,
    spikes: sim.latencySpikes,
    failedActions: sim.world.failedActions,
  };
  let apiserverRestarts = 0;
  let apiserverDownSeconds = 0;
  try {
    for (let i = 0; i < options.baseNodes; i++) await join(`base-${i}`);
    await waitUntil(
      async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID),
      120_000,
    );

    // Faults on.
    const faultStart = Date.now();
    const unavailable = { match: ".", rate: 0.1, status: 503, code: "unavailable" };
    sim.control.setFaults({ rules: [unavailable], latencySpike: { rate: 0.02, ms: 3_000 } });
    sim.control.setActionFailureRate(0.1);
    let running = true;
    const killer = (async () => {
      const [min, max] = options.killEveryMs;
      while (running) {
        await sleep(min + random() * (max - min));
        if (!running) break;
        const last = usage.get(ccm) ?? { rss: 0, cpu: 0 };
        usage.set(ccm, { ...last, rss: Math.max(last.rss, ccm.peakRssBytes() ?? 0) });
        ccm.child.kill("SIGKILL");
        await ccm.status;
        ccm = spawnCcm(args, env);
        processes.push(ccm);
      }
    })();
    // Every 7 s the project's budget runs dry for 1.5 s (someone else's burst): everything is 429.
    const bursts = setInterval(() => {
      sim.control.setFaults({
        rules: [unavailable, {
          match: ".",
          status: 429,
          code: "rate_limit_exceeded",
          message: "limit of requests per hour reached",
          untilMs: Date.now() + 1_500,
        }],
      });
    }, 7_000);
    const services = (async () => {
      const batch = options.serviceBatch;
      for (let first = 0; first < options.serviceCycles; first += batch) {
        const size = Math.min(batch, options.serviceCycles - first);
        await Promise.all(Array.from({ length: size }, async (_, k) => {
          const name = `cycle-${first + k}`;
          await retrying(() => client.create(SERVICES, lbService(name)));
          await sleep(random() * options.serviceStepMaxMs);
          await retrying(() =>
            client.patch(SERVICES, name, "merge", { spec: { ports: [{ name: "p", port: 8080 }] } }, {
              namespace: "default",
            })
          );
          await sleep(random() * options.serviceStepMaxMs);
          await retrying(() => client.delete(SERVICES, name, { namespace: "default" }));
        }));
      }
      for (let k = 0; k < options.keptServices; k++) {
        await retrying(() => client.create(SERVICES, lbService(`keep-${k}`)));
      }
    })();
    const nodes = (async () => {
      for (let i = 0; i < options.nodeChanges; i++) {
        if (i % 2 === 0) await join(`join-${i}`);
        else await leave(i < 2 * options.baseNodes ? `base-${(i - 1) / 2}` : `join-${i - 1}`);
        await sleep(options.nodeChangeGapMs);
      }
    })();
    const restarts = Promise.all(options.apiserverRestartsAtMs.map(async (at) => {
      await sleep(at);
      await cluster.compactEtcd();
      const down = Date.now();
      await cluster.restartApiserver();
      apiserverDownSeconds += (Date.now() - down) / 1000;
      apiserverRestarts++;
    }));
    await Promise.all([services, nodes, restarts]);

    // Faults off; the last CCM keeps running.
    running = false;
    clearInterval(bursts);
    await killer;
    sim.control.setFaults({ rules: [], latencySpike: undefined, rateLimitBurst: 0 });
    sim.control.setActionFailureRate(0);
    const faultSeconds = (Date.now() - faultStart) / 1000;

    const calm = Date.now();
    // What was still open 10 s, 30 s and 60 s after the faults stopped: why a slow convergence was slow.
    const open: Record<string, string[]> = {};
    const converged = await waitUntil(async () => {
      const problems = await invariants(client, sim, live);
      for (const mark of [10, 30, 60]) {
        if (problems.length && Date.now() - calm >= mark * 1000 && !open[`${mark}s`]) {
          open[`${mark}s`] = problems.slice(0, 5);
        }
      }
      return problems.length === 0;
    }, options.convergeWithinMs);
    const convergedSeconds = converged ? (Date.now() - calm) / 1000 : undefined;
    let hostileTouches: number | undefined;
    let nodesDeletedWhenEmpty: number | undefined;
    if (converged && options.safetyPhases) {
      hostileTouches = await hostileServicePhase(client, sim, "keep-0");
      nodesDeletedWhenEmpty = await emptyCloudPhase(client, sim, options.safetyPhases.emptyForMs);
    }
    const settled = !options.safetyPhases ||
      await waitUntil(
        async () => (await invariants(client, sim, live)).length === 0,
        options.convergeWithinMs,
      );
    const problems = converged && settled ? [] : await invariants(client, sim, live);
    clearInterval(sampler);
    const figures = [...usage.values()];
    return {
      seed,
      faultSeconds,
      convergedSeconds,
      openAfter: open,
      problems,
      hostileTouches,
      nodesDeletedWhenEmpty,
      kills: processes.length - 1,
      apiserverRestarts,
      apiserverDownSeconds: Math.round(apiserverDownSeconds),
      requests: sim.audit.length - firstRequest,
      injected5xx: faults.fiveXx(),
      injected429: sim.rateLimited - faults.rateLimited,
      latencySpikes: sim.latencySpikes - faults.spikes,
      failedActions: sim.world.failedActions - faults.failedActions,
      loadBalancersCreated: sim.audit.slice(firstRequest).filter((e) =>
        e.route === "POST /load_balancers" && e.status === 201
      ).length,
      rssMbPeak: Math.round(Math.max(0, ...figures.map((f) => f.rss)) / 1e5) / 10,
      cpuSeconds: Math.round(figures.reduce((sum, f) => sum + f.cpu, 0) * 100) / 100,
      lastOutput: ccm.output().slice(-4000),
    };
  } finally {
    clearInterval(sampler);
    // For debugging a run: FAULT_SCENARIO_LOGS=<dir> keeps every CCM process's output.
    const logDir = Deno.env.get("FAULT_SCENARIO_LOGS");
    for (const [i, p] of processes.entries()) {
      try {
        p.child.kill("SIGKILL");
      } catch { /* gone */ }
      await p.status;
      if (logDir) await Deno.writeTextFile(`${logDir}/ccm-${i}.log`, p.output());
    }
    client.transport.close();
  }
}

/** Polls `check` every 200 ms (a failing check is "not yet"); false when it did not hold within `timeoutMs`. */
function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return pollUntil(check, { timeoutMs, intervalMs: 200, ignoreErrors: true });
}

/** Every violated invariant, as text (empty when converged). */
export async function invariants(
  client: KubeClient,
  sim: Simulator,
  live: Map<string, number>,
): Promise<string[]> {
  const problems: string[] = [];
  const services = (await client.list(SERVICES, { namespace: "default" })).items.filter((x) =>
    x.spec?.type === "LoadBalancer"
  );
  const nodes = (await client.list(NODES)).items;
  const uids = new Set(services.map((x) => x.metadata!.uid));
  for (const lb of sim.world.loadBalancers.values()) {
    if (!uids.has(lb.labels[SERVICE_UID_LABEL])) problems.push(`leaked load balancer ${lb.name}`);
  }
  const want = [...live.values()].sort((a, b) => a - b);
  for (const svc of services) {
    if (!(svc.status?.loadBalancer?.ingress ?? []).length) {
      problems.push(`service ${svc.metadata!.name} has no ingress`);
    }
    const lb = [...sim.world.loadBalancers.values()].find((x) =>
      x.labels[SERVICE_UID_LABEL] === svc.metadata!.uid
    );
    if (!lb) {
      problems.push(`service ${svc.metadata!.name} has no load balancer`);
      continue;
    }
    const got = targetServerIds(sim.world, lb);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      problems.push(
        `load balancer ${lb.name} targets: missing ${want.filter((x) => !got.includes(x))}; extra ${
          got.filter((x) => !want.includes(x))
        }`,
      );
    }
  }
  const names = new Set(nodes.map((n) => n.metadata!.name!));
  for (const name of live.keys()) {
    if (!names.has(name)) problems.push(`node ${name} was deleted although its server exists`);
  }
  for (const n of nodes) {
    if (!live.has(n.metadata!.name!)) problems.push(`node ${n.metadata!.name} should be deleted`);
  }
  const wantRoutes = nodes.filter((n) => live.has(n.metadata!.name!)).map((n) =>
    `${n.spec!.podCIDRs![0]} via ${(n.status?.addresses ?? []).find((a) => a.type === "InternalIP")?.address}`
  ).sort();
  const routes = sim.world.findNetwork("k8s")!.routes.map((r) => `${r.destination} via ${r.gateway}`).sort();
  if (JSON.stringify(routes) !== JSON.stringify(wantRoutes)) {
    problems.push(`routes: ${routes.length} in the network, ${wantRoutes.length} wanted`);
  }
  return problems;
}
