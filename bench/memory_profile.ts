/**
 * Where the CCM's memory goes at N Nodes: starts it under the V8 inspector, lets N kubelet-sized
 * Nodes join and S load balancers roll out, then reports the process's resident memory by mapping
 * (anonymous vs. the executable's file-backed pages), V8's own accounting, and a heap snapshot's
 * self sizes by constructor. The snapshot goes to `bench/ccm.heapsnapshot` (not committed).
 *
 *   deno run --allow-all bench/memory_profile.ts [--nodes 1000] [--services 50] [--bundle]
 *                                                [--env NAME=VALUE ...]
 *
 * `--bundle` runs the bundle the release compiles (`deno task bundle`: one module, no TypeScript to
 * transpile, as the compiled binary runs) instead of `main.ts`; `--env` adds to the CCM's environment.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { setupLogging } from "../lib/log.ts";
import { freePort } from "../testing/helpers.ts";
import { joinAndRollOut } from "./bench_util.ts";
import { benchEnvironment } from "./environment.ts";
import { inspectorSession } from "./cpu_profile.ts";

/** Resident kB by mapping kind: anonymous (heap, stacks, malloc) and each mapped file. */
export function residentByMapping(smaps: string): Map<string, number> {
  const out = new Map<string, number>();
  let current = "";
  for (const line of smaps.split("\n")) {
    const header = line.match(/^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/);
    if (header) {
      current = header[1] || "[anonymous]";
      continue;
    }
    const rss = line.match(/^Rss:\s+(\d+) kB/);
    if (rss) out.set(current, (out.get(current) ?? 0) + Number(rss[1]));
  }
  return out;
}

/** A heap snapshot's self sizes summed by `type:name` (constructor for objects), largest first. */
export function selfSizes(snapshot: {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}): [string, number, number][] {
  const fields = snapshot.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = snapshot.snapshot.meta.node_types[0];
  const sums = new Map<string, [number, number]>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]];
    // Strings are keyed by type alone: their "name" is their content.
    const name = type === "object" || type === "closure" || type === "native"
      ? snapshot.strings[snapshot.nodes[i + nameAt]]
      : "";
    const key = `${type}:${name.slice(0, 60)}`;
    const sum = sums.get(key) ?? [0, 0];
    sum[0] += snapshot.nodes[i + sizeAt];
    sum[1]++;
    sums.set(key, sum);
  }
  return [...sums].map(([k, [size, count]]) => [k, size, count] as [string, number, number])
    .sort((a, b) => b[1] - a[1]);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      nodes: { type: "string", default: "1000" },
      services: { type: "string", default: "50" },
      bundle: { type: "boolean", default: false },
      env: { type: "string", multiple: true, default: [] },
    },
  });
  const nodes = Number(values.nodes);
  const serviceCount = Number(values.services);
  setupLogging({ level: "warning", format: "text" });
  const inspectPort = freePort();
  let entry: string | undefined;
  if (values.bundle) {
    entry = `${await Deno.makeTempDir({ prefix: "deno-ccm-bundle-" })}/deno-ccm.js`;
    const main = new URL("../main.ts", import.meta.url).pathname;
    const built = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--output", entry, main],
    })
      .output();
    if (!built.success) throw new Error(`deno bundle failed: ${new TextDecoder().decode(built.stderr)}`);
  }
  const extraEnv = Object.fromEntries(
    values.env!.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
  );
  const env = await benchEnvironment(nodes, {
    entry,
    env: extraEnv,
    latencyMs: 50,
    actionMs: 1_000,
    prelabelled: true,
    denoArgs: [`--inspect=127.0.0.1:${inspectPort}`],
  });
  const { client, ccm } = env;
  const session = await inspectorSession(inspectPort);
  const started = Date.now();
  await joinAndRollOut(client, nodes, serviceCount);
  console.log(
    `${nodes} Nodes and ${serviceCount} balancers ready in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  // Past the start's one-off work (the orphan sweep at 75 s), as the steady-state benchmark measures.
  await new Promise((r) => setTimeout(r, Math.max(0, started + 100_000 - Date.now())));
  const status = await Deno.readTextFile(`/proc/${ccm.child.pid}/status`);
  for (const f of ["VmHWM", "VmRSS", "RssAnon", "RssFile"]) {
    console.log(status.match(new RegExp(`^${f}:.*$`, "m"))?.[0]);
  }
  const byMapping = [...residentByMapping(await Deno.readTextFile(`/proc/${ccm.child.pid}/smaps`))]
    .sort((a, b) => b[1] - a[1]);
  console.log("resident kB by mapping:");
  for (const [name, kb] of byMapping.slice(0, 8)) console.log(`${String(kb).padStart(8)}  ${name}`);
  const usage = await session.send<{ result: { value: string } }>("Runtime.evaluate", {
    expression: "JSON.stringify(Deno.memoryUsage())",
  });
  console.log("Deno.memoryUsage():", usage.result.value);
  const chunks: string[] = [];
  session.onEvent("HeapProfiler.addHeapSnapshotChunk", (p) => chunks.push((p as { chunk: string }).chunk));
  await session.send("HeapProfiler.enable");
  await session.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
  const text = chunks.join("");
  await Deno.writeTextFile(new URL("ccm.heapsnapshot", import.meta.url), text);
  const sizes = selfSizes(JSON.parse(text));
  const total = sizes.reduce((s, [, n]) => s + n, 0);
  console.log(`heap snapshot: ${(total / 1e6).toFixed(1)} MB live; top self sizes (kB, count):`);
  for (const [key, size, count] of sizes.slice(0, 30)) {
    console.log(`${String(Math.round(size / 1000)).padStart(8)} ${String(count).padStart(8)}  ${key}`);
  }
  session.close();
  await env.close();
  Deno.exit(0);
}
