/**
 * Where the CCM spends CPU: runs it under the V8 inspector while 500 Nodes join and 50 load
 * balancers roll out (burst_join then lb_rollout), records a CPU profile over the Chrome DevTools
 * protocol and prints the functions with the most self time. The full profile goes to
 * `bench/ccm.cpuprofile` (open it in Chrome DevTools, not committed).
 *
 *   deno run --allow-all bench/cpu_profile.ts [--nodes 500] [--services 50]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { setupLogging } from "../lib/log.ts";
import { freePort } from "../testing/helpers.ts";
import { joinAndRollOut, waitFor } from "./bench_util.ts";
import { benchEnvironment } from "./environment.ts";

/** The parts of a `Profiler.stop` result this tool reads. */
interface CpuProfile {
  nodes: {
    id: number;
    hitCount?: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

/** A minimal Chrome DevTools protocol session over the inspector's WebSocket. */
export async function inspectorSession(port: number) {
  let targets: { webSocketDebuggerUrl: string }[] = [];
  await waitFor(async () => {
    targets = await fetch(`http://127.0.0.1:${port}/json/list`).then((r) => r.json(), () => []);
    return targets.length > 0;
  }, 30_000);
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let nextId = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  const listeners = new Map<string, (params: unknown) => void>();
  socket.onmessage = (e) => {
    const message = JSON.parse(e.data);
    if (message.method) listeners.get(message.method)?.(message.params);
    else waiting.get(message.id)?.(message.result);
  };
  return {
    send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => waiting.set(id, resolve as (r: unknown) => void));
    },
    /** Calls `listener` with the params of each `method` event (one listener per method). */
    onEvent(method: string, listener: (params: unknown) => void) {
      listeners.set(method, listener);
    },
    close: () => socket.close(),
  };
}

/** Self time per function (`name file:line`), largest first, in ms. */
export function selfTimes(profile: CpuProfile): [string, number][] {
  const total = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
  const msPerHit = total ? (profile.endTime - profile.startTime) / 1000 / total : 0;
  const byFunction = new Map<string, number>();
  for (const n of profile.nodes) {
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url.replace(/^.*\/(node_modules|main|npm)\//, "$1/").replace(/^file:\/\/.*?\/main\//, "");
    const key = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + (n.hitCount ?? 0) * msPerHit);
  }
  return [...byFunction].sort((a, b) => b[1] - a[1]);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { nodes: { type: "string", default: "500" }, services: { type: "string", default: "50" } },
  });
  const nodes = Number(values.nodes);
  const serviceCount = Number(values.services);
  setupLogging({ level: "warning", format: "text" });
  const inspectPort = freePort();
  const env = await benchEnvironment(nodes, {
    latencyMs: 50,
    actionMs: 1_000,
    denoArgs: [`--inspect=127.0.0.1:${inspectPort}`],
    // Past 1000 Nodes the servers already carry the target label, as in steady_state: labelling
    // thousands of servers (one request each) outlasts the project's hourly budget on its own.
    prelabelled: nodes > 1000,
  });
  const { client, ccm } = env;
  const session = await inspectorSession(inspectPort);
  await session.send("Profiler.enable");
  // Every 200 µs for the default burst; every 1 ms past 1000 Nodes (a profile of many minutes).
  await session.send("Profiler.setSamplingInterval", { interval: nodes > 1000 ? 1000 : 200 });
  await session.send("Profiler.start");
  const started = Date.now();
  await joinAndRollOut(client, nodes, serviceCount);
  const { profile } = await session.send<{ profile: CpuProfile }>("Profiler.stop");
  const wall = (Date.now() - started) / 1000;
  session.close();
  await Deno.writeTextFile(new URL("ccm.cpuprofile", import.meta.url), JSON.stringify(profile));
  const metrics = (await ccm.get("/metrics")).text;
  const cpu = Number(metrics.match(/^process_cpu_seconds_total (\S+)/m)?.[1] ?? 0);
  const times = selfTimes(profile);
  const sampled = times.reduce((sum, [, ms]) => sum + ms, 0);
  const idle = times.filter(([k]) => k.startsWith("(idle)")).reduce((sum, [, ms]) => sum + ms, 0);
  console.log(
    `${nodes} nodes joined and ${serviceCount} load balancers rolled out in ${wall.toFixed(1)} s; ` +
      `process CPU ${cpu.toFixed(2)} s; JS thread busy ${((sampled - idle) / 1000).toFixed(2)} s`,
  );
  console.log("top self time (ms):");
  for (const [name, ms] of times.filter(([k]) => !k.startsWith("(idle)")).slice(0, 25)) {
    console.log(`${ms.toFixed(0).padStart(7)}  ${name}`);
  }
  await env.close();
  Deno.exit(0);
}
