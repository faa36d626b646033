/**
 * Peak memory under hostile or broken Cloud API answers (security review Q9, issue 59 item 5): each
 * answer is generated lazily and fed to the real client (transport, bounds, scanner, number check) in
 * a process of its own, run with the compiled binary's V8 flags; the process's peak RSS (VmHWM) is
 * what the answer cost. The chart's memory limit is 256 Mi.
 *
 *   deno run --allow-all bench/hostile_answers.ts [--case NAME]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { HcloudClient } from "../hcloud_api/mod.ts";

const enc = new TextEncoder();

/** A body from `parts`, each a string or a generator of strings, made as it is read. */
function lazy(parts: (string | (() => Iterator<string>))[]): ReadableStream<Uint8Array> {
  let i = 0;
  let current: Iterator<string> | undefined;
  return new ReadableStream({
    pull(c) {
      for (;;) {
        if (current) {
          const next = current.next();
          if (!next.done) return c.enqueue(enc.encode(next.value));
          current = undefined;
        }
        if (i >= parts.length) return c.close();
        const part = parts[i++];
        if (typeof part === "string") return c.enqueue(enc.encode(part));
        current = part();
      }
    },
  });
}

/** `n` chunks of `text`. */
function* repeat(text: string, n: number): Iterator<string> {
  for (let k = 0; k < n; k++) yield text;
}

const META = '"meta":{"pagination":{"page":1,"next_page":null,"last_page":1}}';
const smallObjects = (mb: number) => () => {
  const one = '{"a":1,"b":[2,3],"c":{"d":"e"}},';
  return repeat(one.repeat(Math.floor(64 * 1024 / one.length)), Math.floor(mb * 16));
};

/** Each hostile answer: streamed (a list of balancers) or read whole (a list of servers). */
const CASES: Record<string, { streamed: boolean; body: () => ReadableStream<Uint8Array> }> = {
  "streamed: one 100 MB string item": {
    streamed: true,
    body: () => lazy([`{${META},"load_balancers":["`, () => repeat("x".repeat(64 * 1024), 1600), '"]}']),
  },
  "streamed: one item nested 15 M deep (30 MB)": {
    streamed: true,
    body: () =>
      lazy([
        `{${META},"load_balancers":[`,
        () => repeat("[".repeat(64 * 1024), 229),
        () => repeat("]".repeat(64 * 1024), 229),
        "]}",
      ]),
  },
  "streamed: 30 MB of small objects in one item": {
    streamed: true,
    body: () => lazy([`{${META},"load_balancers":[[`, smallObjects(30), '{"a":1}]]}']),
  },
  "streamed: 16 top-level fields of 30 MB": {
    streamed: true,
    body: () =>
      lazy([
        "{",
        ...Array.from({ length: 16 }, (_, f) => [`"f${f}":"`, () => repeat("y".repeat(64 * 1024), 480), '",'])
          .flat(),
        `${META},"load_balancers":[]}`,
      ]),
  },
  "streamed: 3.9 MB of small objects in one item (accepted)": {
    streamed: true,
    body: () => lazy([`{${META},"load_balancers":[[`, smallObjects(3.9), '{"a":1}]]}']),
  },
  "whole: 30 MB of small objects": {
    streamed: false,
    body: () => lazy([`{${META},"servers":[`, smallObjects(30), '{"a":1}]}']),
  },
  "whole: 4 MB nested 2 M deep": {
    streamed: false,
    body: () =>
      lazy([
        `{${META},"servers":[`,
        () => repeat("[".repeat(64 * 1024), 30),
        () => repeat("]".repeat(64 * 1024), 30),
        "]}",
      ]),
  },
  "whole: 3.9 MB of small objects (accepted)": {
    streamed: false,
    body: () => lazy([`{${META},"servers":[`, smallObjects(3.9), '{"a":1}]}']),
  },
};

/** Peak resident memory of this process, in MB. */
function peakMb(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function child(name: string): Promise<void> {
  const kase = CASES[name];
  const client = new HcloudClient({
    endpoint: "http://127.0.0.1:1/v1",
    token: "t",
    maxRetries: 0,
    fetch: () =>
      Promise.resolve(new Response(kase.body(), { headers: { "content-type": "application/json" } })),
  });
  let outcome: string;
  try {
    const items = kase.streamed
      ? await client.listAllStreamed(
        "list load balancers",
        "load_balancers",
        (p, s) => client.api.GET("/load_balancers", { params: { query: { page: p } }, ...s }),
      )
      : await client.listAll(
        "list servers",
        "servers",
        (p) => client.api.GET("/servers", { params: { query: { page: p } } }),
      );
    outcome = `accepted (${items.length} item(s))`;
  } catch (err) {
    outcome = `refused: ${(err as Error).message.slice(0, 90)}`;
  }
  console.log(JSON.stringify({ name, outcome, peakMb: Math.round(peakMb() * 10) / 10 }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: Deno.args, options: { case: { type: "string" } } });
  if (values.case) return await child(values.case);
  // The compiled binary's V8 flags (deno.json `compile`), so the peaks are the shipped process's.
  const task: string =
    JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url))).tasks.compile;
  const v8 = task.match(/--v8-flags=(\S+)/)?.[1] ?? "";
  console.log(`| answer | outcome | peak RSS |\n| --- | --- | --- |`);
  for (const name of Object.keys(CASES)) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `--v8-flags=${v8}`, new URL(import.meta.url).pathname, "--case", name],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const line = new TextDecoder().decode(out.stdout).trim().split("\n").pop() ?? "";
    try {
      const r = JSON.parse(line);
      console.log(`| ${r.name} | ${r.outcome} | ${r.peakMb} MB |`);
    } catch {
      console.log(`| ${name} | crashed (exit ${out.code}) | - |`);
    }
  }
}

if (import.meta.main) await main();
