/**
 * `deno task bench`: the CCM as its own process against a real kube-apiserver and the simulator
 * (API latency 50 ms, actions 1 s), in six scenarios; writes bench/report.json, bench/report.md
 * and bench/convergence.svg.
 *
 *   deno task bench [--steady-minutes 10] [--steady-nodes 100,1000,5000] [--steady-refresh actions,list]
 *                   [--latency-ms 50] [--action-ms 1000] [--robot-minutes 10] [--only burst_join,churn]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES } from "../kube/resources.ts";
import { setupLogging } from "../lib/log.ts";
import { type ScenarioResult, writeReport } from "./report.ts";
import { createNodes, createServices, ingressCount, initTimes, quantile, waitFor } from "./bench_util.ts";
import { headline, type RefreshMode, steadyStateMatrix } from "./steady_state.ts";
import { faultsScenario } from "./faults.ts";
import { benchEnvironment } from "./environment.ts";
import { robotMixScenario } from "./robot_mix.ts";

const SCENARIOS = ["burst_join", "steady_state", "lb_rollout", "churn", "faults", "robot_mix"];
const { values } = parseArgs({
  args: Deno.args,
  options: {
    "steady-minutes": { type: "string", default: "10" },
    "latency-ms": { type: "string", default: "50" },
    "action-ms": { type: "string", default: "1000" },
    only: { type: "string", default: SCENARIOS.join(",") },
    "steady-nodes": { type: "string", default: "100,1000,5000" },
    "steady-refresh": { type: "string", default: "actions,list" },
    "robot-minutes": { type: "string", default: "10" },
  },
});
setupLogging({ level: "warning", format: "text" });
const LATENCY = Number(values["latency-ms"]);
const ACTION = Number(values["action-ms"]);
const only = new Set(values.only!.split(","));
const results: Record<string, ScenarioResult> = {};

/** The benchmark's environment at this run's latency and action duration. */
function environment(servers: number) {
  return benchEnvironment(servers, { latencyMs: LATENCY, actionMs: ACTION });
}

if (only.has("burst_join")) {
  console.log("burst_join: 500 nodes registered at once ...");
  const env = await environment(500);
  const series: [number, number][] = [];
  const before = env.sim.audit.length;
  const start = Date.now();
  await createNodes(env.client, 500, 0);
  const times = await initTimes(
    env.client,
    new Set(Array.from({ length: 500 }, (_, i) => `node-${i}`)),
    start,
    300_000,
    series,
  );
  results.burst_join = {
    seconds_total: times.at(-1)!,
    seconds_p50: quantile(times, 0.5),
    seconds_p99: quantile(times, 0.99),
    requests: env.sim.audit.length - before,
    rss_mb_peak: env.peakRssMb(),
    cpu_seconds: await env.cpuSeconds(),
    series,
    // Last: the CCM stops here.
    rate_limited_responses: await env.close(),
  };
}

if (only.has("lb_rollout")) {
  console.log("lb_rollout: 50 LoadBalancer Services at once on 100 nodes ...");
  const env = await environment(100);
  await createNodes(env.client, 100, 0);
  await initTimes(
    env.client,
    new Set(Array.from({ length: 100 }, (_, i) => `node-${i}`)),
    Date.now(),
    300_000,
    [],
  );
  const before = env.sim.audit.length;
  const series: [number, number][] = [];
  const start = Date.now();
  await createServices(env.client, 50);
  const times: number[] = [];
  await waitFor(
    async () => {
      const ready = await ingressCount(env.client);
      while (times.length < ready) times.push((Date.now() - start) / 1000);
      series.push([(Date.now() - start) / 1000, ready / 50]);
      return ready === 50;
    },
    600_000,
    250,
  );
  results.lb_rollout = {
    seconds_total: times.at(-1)!,
    seconds_p99: quantile(times, 0.99),
    requests: env.sim.audit.length - before,
    rss_mb_peak: env.peakRssMb(),
    cpu_seconds: await env.cpuSeconds(),
    series,
    // Last: the CCM stops here.
    rate_limited_responses: await env.close(),
  };
}

if (only.has("churn")) {
  console.log("churn: 50 nodes join and 50 leave while 50 Services exist ...");
  const env = await environment(150);
  await createNodes(env.client, 100, 0);
  await initTimes(
    env.client,
    new Set(Array.from({ length: 100 }, (_, i) => `node-${i}`)),
    Date.now(),
    300_000,
    [],
  );
  await createServices(env.client, 50);
  await waitFor(async () => (await ingressCount(env.client)) === 50, 600_000, 500);
  const expected = (ids: number[]) =>
    [...env.sim.world.loadBalancers.values()].every((lb) =>
      JSON.stringify(targetServerIds(env.sim.world, lb)) === JSON.stringify(ids)
    );
  const serverId = (name: string) => [...env.sim.world.servers.values()].find((s) => s.name === name)?.id;
  const before = env.sim.audit.length;
  const series: [number, number][] = [];
  const start = Date.now();
  // 50 leave: their servers are deleted and the kubelets stop reporting; 50 new ones register.
  for (let i = 0; i < 50; i++) env.sim.world.servers.delete(serverId(`node-${i}`)!);
  await Promise.all(Array.from({ length: 50 }, (_, i) =>
    env.client.patch(NODES, `node-${i}`, "strategic", {
      status: {
        conditions: [{ type: "Ready", status: "False", reason: "KubeletStopped", message: "bench" }],
      },
    }, { subresource: "status" })));
  await createNodes(env.client, 50, 100);
  const want = Array.from({ length: 100 }, (_, i) => serverId(`node-${i + 50}`)!).sort((a, b) => a - b);
  await waitFor(
    () => {
      const right = [...env.sim.world.loadBalancers.values()].filter((lb) =>
        JSON.stringify(targetServerIds(env.sim.world, lb)) === JSON.stringify(want)
      ).length;
      series.push([(Date.now() - start) / 1000, right / 50]);
      return Promise.resolve(expected(want));
    },
    600_000,
    250,
  );
  const requests = env.sim.audit.length - before;
  results.churn = {
    seconds_total: (Date.now() - start) / 1000,
    requests,
    requests_per_node_change: Math.round((requests / 100) * 100) / 100,
    rss_mb_peak: env.peakRssMb(),
    cpu_seconds: await env.cpuSeconds(),
    series,
    // Last: the CCM stops here.
    rate_limited_responses: await env.close(),
  };
}

if (only.has("steady_state")) {
  const matrix = await steadyStateMatrix({
    nodes: values["steady-nodes"]!.split(",").map(Number),
    refresh: values["steady-refresh"]!.split(",") as RefreshMode[],
    minutes: Number(values["steady-minutes"]),
    latencyMs: LATENCY,
    actionMs: ACTION,
  });
  results.steady_state = headline(matrix);
}

if (only.has("faults")) {
  console.log(
    "faults: Service cycles and node changes under faults, SIGKILLs and apiserver restarts ...",
  );
  results.faults = await faultsScenario(LATENCY, ACTION);
}

if (only.has("robot_mix")) {
  console.log("robot_mix: 200 Robot Nodes join a cluster of 20 Cloud Nodes and 5 balancers ...");
  results.robot_mix = await robotMixScenario(LATENCY, ACTION, Number(values["robot-minutes"]));
}

const report = await writeReport(results, { latencyMs: LATENCY, actionMs: ACTION });
console.log(JSON.stringify(report, null, 2));
Deno.exit(0);
