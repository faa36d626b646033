/**
 * The restart scenario (issue 64's first figures): what a start costs. A cluster of N initialized
 * Nodes and B served balancers; the CCM is killed (`SIGKILL`: a crash, an OOM) and started again as it
 * was, twice:
 *
 * 1. quiet: every cloud request of the new process's first `observe` seconds, by endpoint (the idle
 *    rate's share is in it: ~0.5 a minute at 1000 Nodes), its time to /readyz and its peak memory;
 * 2. with work waiting: a server created in the console while the CCM was down and its Node registered,
 *    a new Service created, both the moment the process starts: seconds from the start to the Node
 *    initialized and to the Service's ingress (a new leader's time to first action).
 *
 * A crash loop's spend is read from it: the kubelet restarts a crashing container about 16 times in its
 * first hour (10 s doubling to 5 minutes) and 12 times an hour after, so a loop that crashes after its
 * start costs about that many times one start an hour.
 *
 *   deno task bench --only restart [--restart-sizes 1000:50,5000:50] [--runs 3]
 *
 * @module
 */
import { NODES, SERVICES } from "../kube/resources.ts";
import type { ScenarioResult } from "./report.ts";
import { createNodes, joinAndRollOut, waitFor } from "./bench_util.ts";
import { benchEnvironment } from "./environment.ts";
import { repeated } from "./runs.ts";

/** One size's figures. */
export interface RestartRun extends ScenarioResult {
  nodes: number;
  balancers: number;
  /** Seconds observed after each quiet start. */
  observed_seconds: number;
  /** Cloud requests of the quiet start's first `observed_seconds`, and by endpoint. */
  start_requests: number;
  start_requests_by_endpoint: Record<string, number>;
  /** Seconds from the process's start to /readyz. */
  ready_seconds: number;
  /** Seconds from the process's start to a new Node initialized and to a new Service's ingress. */
  first_node_seconds: number;
  first_service_seconds: number;
  /** Cloud requests from the second start until both were done. */
  first_actions_requests: number;
  rss_anon_mb_peak: number;
  rss_file_mb: number;
  /** Requests an hour a crash loop would spend at 12 starts an hour (the kubelet's back-off after the first hour). */
  crash_loop_requests_per_hour: number;
}

/** Kubelet restarts of a crashing container in an hour once its back-off reached 5 minutes. */
const LOOP_STARTS_PER_HOUR = 12;

/** Runs every `nodes:balancers` size, one after the other. */
export async function restartScenario(o: {
  sizes: [number, number][];
  latencyMs: number;
  actionMs: number;
  observeSeconds: number;
  runs: number;
}): Promise<ScenarioResult> {
  const rows: RestartRun[] = [];
  for (const [nodes, balancers] of o.sizes) {
    console.log(`restart: ${nodes} Nodes, ${balancers} balancers, killed and started twice ...`);
    rows.push(
      await repeated(o.runs, () => restartRun({ ...o, nodes, balancers }), {
        key: (r) => (r as RestartRun).start_requests,
        spread: ["start_requests", "first_node_seconds", "first_service_seconds", "rss_anon_mb_peak"],
      }) as RestartRun,
    );
  }
  const main = rows.find((r) => r.nodes === 1000) ?? rows[0];
  return { ...main, matrix: rows };
}

async function restartRun(o: {
  nodes: number;
  balancers: number;
  latencyMs: number;
  actionMs: number;
  observeSeconds: number;
}): Promise<RestartRun> {
  const started = Date.now();
  const env = await benchEnvironment(o.nodes, {
    latencyMs: o.latencyMs,
    actionMs: o.actionMs,
    prelabelled: true,
    networkServers: o.nodes + 1,
  });
  let closed = false;
  try {
    await joinAndRollOut(env.client, o.nodes, o.balancers);
    // The first process's one-off orphan sweep (75 s after its start) is behind us before the kill.
    await sleep(Math.max(0, started + 100_000 - Date.now()));

    // 1. A quiet start.
    let from = env.sim.audit.length;
    let t0 = Date.now();
    await env.restart("SIGKILL");
    await env.ready();
    const ready = (Date.now() - t0) / 1000;
    await sleep(Math.max(0, t0 + o.observeSeconds * 1000 - Date.now()));
    const quiet = env.sim.audit.slice(from).filter((e) => e.time < t0 + o.observeSeconds * 1000);
    const byEndpoint: Record<string, number> = {};
    for (const e of quiet) byEndpoint[e.route] = (byEndpoint[e.route] ?? 0) + 1;
    const memory = env.rssPartsMb();
    const rss = env.peakRssMb();

    // 2. A start with a new Node and a new Service waiting.
    const name = `node-${o.nodes}`;
    env.sim.control.createServer({
      name,
      server_type: "cpx21",
      location: "fsn1",
      private_net: [{ network: "k8s" }],
    });
    from = env.sim.audit.length;
    t0 = Date.now();
    await env.restart("SIGKILL");
    await Promise.all([
      createNodes(env.client, 1, o.nodes),
      env.client.create(SERVICES, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "after-restart", namespace: "default" },
        spec: { type: "LoadBalancer", selector: { app: "after" }, ports: [{ name: "http", port: 80 }] },
      }),
    ]);
    const [node, service] = await Promise.all([
      timed(t0, async () => {
        const n = await env.client.get(NODES, name);
        return !!n.spec?.providerID && !(n.spec.taints ?? []).some((t) => t.key.endsWith("uninitialized"));
      }),
      timed(t0, async () => {
        const s = await env.client.get(SERVICES, "after-restart", { namespace: "default" });
        return (s.status?.loadBalancer?.ingress ?? []).length > 0;
      }),
    ]);
    const firstActions = env.sim.audit.length - from;
    const cpu = await env.cpuSeconds();
    closed = true;
    return {
      nodes: o.nodes,
      balancers: o.balancers,
      observed_seconds: o.observeSeconds,
      requests: quiet.length,
      start_requests: quiet.length,
      start_requests_by_endpoint: byEndpoint,
      ready_seconds: Math.round(ready * 10) / 10,
      first_node_seconds: node,
      first_service_seconds: service,
      first_actions_requests: firstActions,
      rss_mb_peak: rss,
      rss_anon_mb_peak: memory.anon,
      rss_file_mb: memory.file,
      cpu_seconds: cpu,
      crash_loop_requests_per_hour: quiet.length * LOOP_STARTS_PER_HOUR,
      // Last: the CCM stops here.
      rate_limited_responses: await env.close(),
    };
  } finally {
    if (!closed) await env.close();
  }
}

/** Seconds from `t0` until `check` holds (polled every 100 ms, at most 10 minutes). */
async function timed(t0: number, check: () => Promise<boolean>): Promise<number> {
  await waitFor(() => check().catch(() => false), 600_000, 100);
  return Math.round((Date.now() - t0) / 100) / 10;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
