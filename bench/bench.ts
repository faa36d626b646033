/**
 * `deno task bench`: the CCM as its own process against a real kube-apiserver and the simulator
 * (API latency 50 ms, actions 1 s), in nine scenarios; writes bench/report.json, bench/report.md
 * and bench/convergence.svg.
 *
 *   deno task bench [--steady-minutes 10] [--steady-nodes 100,1000,5000] [--steady-refresh actions,list]
 *                   [--steady-skip 5000:list] [--steady-burst 1000]   (Nodes joining after each window)
 *                   [--latency-ms 50] [--action-ms 1000] [--robot-minutes 10] [--only burst_join,churn]
 *                   [--runs 3]   (the median run, min and load averages; steady_state: each pair's runs)
 *                   [--restart-sizes 1000:50,5000:50] [--restart-observe 180]   (Nodes:balancers; seconds)
 *
 * `BENCH_STEADY_AUDIT=<dir>` keeps every cloud request of each steady-state run (see steady_state.ts).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { setupLogging } from "../lib/log.ts";
import { type ScenarioResult, writeReport } from "./report.ts";
import { headline, type RefreshMode, steadyStateMatrix } from "./steady_state.ts";
import { faultsScenario } from "./faults.ts";
import { benchEnvironment } from "./environment.ts";
import { burstJoin } from "./burst_join.ts";
import { lbRollout } from "./lb_rollout.ts";
import { churn } from "./churn.ts";
import { robotMixScenario } from "./robot_mix.ts";
import { drainScenario } from "./drain.ts";
import { tlsSecretsScenario } from "./tls_secrets.ts";
import { repeated } from "./runs.ts";
import { measuredNow, stamp } from "./measured.ts";
import { restartScenario } from "./restart.ts";

const SCENARIOS = [
  "burst_join",
  "steady_state",
  "lb_rollout",
  "churn",
  "faults",
  "robot_mix",
  "drain",
  "tls_secrets",
  "restart",
];
const { values } = parseArgs({
  args: Deno.args,
  options: {
    "steady-minutes": { type: "string", default: "10" },
    "latency-ms": { type: "string", default: "50" },
    "action-ms": { type: "string", default: "1000" },
    only: { type: "string", default: SCENARIOS.join(",") },
    "steady-nodes": { type: "string", default: "100,1000,5000" },
    "steady-refresh": { type: "string", default: "actions,list" },
    "steady-skip": { type: "string", default: "" },
    "steady-burst": { type: "string", default: "0" },
    "robot-minutes": { type: "string", default: "10" },
    runs: { type: "string", default: "1" },
    "restart-sizes": { type: "string", default: "1000:50,5000:50" },
    "restart-observe": { type: "string", default: "180" },
  },
});
setupLogging({ level: "warning", format: "text" });
const LATENCY = Number(values["latency-ms"]);
const ACTION = Number(values["action-ms"]);
const only = new Set(values.only!.split(","));
const results: Record<string, ScenarioResult> = {};

/** The benchmark's environment at this run's latency and action duration. */
function environment(servers: number, env?: Record<string, string>) {
  return benchEnvironment(servers, { latencyMs: LATENCY, actionMs: ACTION, env });
}

const RUNS = Number(values.runs);
if (only.has("burst_join")) results.burst_join = await repeated(RUNS, () => burstJoin(environment));

if (only.has("lb_rollout")) results.lb_rollout = await repeated(RUNS, () => lbRollout(environment));

if (only.has("churn")) results.churn = await repeated(RUNS, () => churn(environment));

if (only.has("steady_state")) {
  const matrix = await steadyStateMatrix({
    nodes: values["steady-nodes"]!.split(",").map(Number),
    refresh: values["steady-refresh"]!.split(",") as RefreshMode[],
    minutes: Number(values["steady-minutes"]),
    skip: values["steady-skip"]!.split(",").filter(Boolean),
    burst: Number(values["steady-burst"]),
    runs: RUNS,
    latencyMs: LATENCY,
    actionMs: ACTION,
  });
  results.steady_state = { ...headline(matrix), skipped: values["steady-skip"]!.split(",").filter(Boolean) };
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

if (only.has("drain")) {
  console.log("drain: every Node replaced under load, graceful draining on and off ...");
  results.drain = await drainScenario();
}

if (only.has("tls_secrets")) results.tls_secrets = await tlsSecretsScenario(environment);

if (only.has("restart")) {
  results.restart = await restartScenario({
    sizes: values["restart-sizes"]!.split(",").map((s) => s.split(":").map(Number) as [number, number]),
    latencyMs: LATENCY,
    actionMs: ACTION,
    observeSeconds: Number(values["restart-observe"]),
    runs: RUNS,
  });
}

stamp(results, await measuredNow());
const report = await writeReport(results, { latencyMs: LATENCY, actionMs: ACTION });
console.log(JSON.stringify(report, null, 2));
Deno.exit(0);
