/**
 * Small helpers shared by the tests.
 *
 * @module
 */
import { LOG_LEVELS, setupLogging } from "../lib/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { EVENTS } from "../kube/resources.ts";

/** Events about the object `name` in `default`, as `"<type> <reason>: <message>"`. */
export async function eventsOf(client: KubeClient, name: string): Promise<string[]> {
  const list = await client.list(EVENTS, {
    namespace: "default",
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.map((e) => `${e.type} ${e.reason}: ${e.message}`);
}

/** How {@link pollUntil} polls. */
export interface PollOptions {
  /** How long to wait for `check` to hold. */
  timeoutMs: number;
  /** Pause between checks (default 50 ms). */
  intervalMs?: number;
  /** A `check` that throws counts as "not yet" instead of ending the wait (default false). */
  ignoreErrors?: boolean;
  /** Ends the wait early (false), e.g. when the process waited on exited. */
  stop?: () => boolean;
}

/**
 * The one polling loop of the tests, benchmarks and conformance suite: calls `check` until it holds;
 * false when it did not within `timeoutMs` (or `stop` said to give up).
 */
export async function pollUntil(
  check: () => boolean | Promise<boolean>,
  options: PollOptions,
): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (options.stop?.()) return false;
    const held = options.ignoreErrors
      ? await Promise.resolve().then(check).catch(() => false)
      : await check();
    if (held) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
}

/** Polls `check` until it returns true; fails after `timeoutMs` (default 20 s). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  if (!(await pollUntil(check, { timeoutMs }))) {
    // What the CCM said meanwhile, at every level: a rare failure explains itself the first time
    // (the draining race of issue 41 failed twice on fresh machines, never with a trace).
    const said = recorded.length ? `\nthe last ${recorded.length} log lines:\n${recorded.join("")}` : "";
    throw new Error(`condition not met within ${timeoutMs} ms: ${check.toString().slice(0, 160)}${said}`);
  }
}

/** The last lines logged at any level, for a failing {@link eventually} (a flight recorder). */
const recorded: string[] = [];
const RECORDED_LINES = 120;
const encoder = new TextEncoder();

/**
 * Shows only errors during tests unless TEST_LOG_LEVEL asks for more; keeps the last
 * {@link RECORDED_LINES} lines of every level (debug included) for a failing {@link eventually}.
 */
export function quietLogs(): void {
  const shown = LOG_LEVELS.indexOf(
    (Deno.env.get("TEST_LOG_LEVEL") ?? "error") as (typeof LOG_LEVELS)[number],
  );
  recorded.length = 0;
  setupLogging({
    level: "debug",
    format: "text",
    write: (line) => {
      recorded.push(line);
      if (recorded.length > RECORDED_LINES) recorded.shift();
      if (levelOf(line) >= shown) Deno.stderr.writeSync(encoder.encode(line));
    },
  });
}

/** The index in {@link LOG_LEVELS} of a text log line's level (a fatal one counts as an error). */
function levelOf(line: string): number {
  // deno-lint-ignore no-control-regex
  const level = line.replace(/\x1b\[[0-9;]*m/g, "").match(/^\S+ (DEBUG|INFO|WARN|ERROR|FATAL)/)?.[1];
  return level === "DEBUG" ? 0 : level === "INFO" ? 1 : level === "WARN" ? 2 : 3;
}

/** Ports handed out by this process (clusters and CCMs started side by side, as the conformance suite does). */
const handedOut = new Set<number>();
let nextPort = 0;

/**
 * `n` loopback TCP ports free right now, below the kernel's ephemeral range, for a process a test
 * starts (etcd, kube-apiserver, a CCM's status server). A port from `port: 0` is free only until
 * closed: every simulator, CCM and client socket of a parallel run binds from that same range, and
 * one took etcd's port between the check and etcd's bind (etcd then exited). Below the range nothing
 * binds but what chooses a port on purpose; a random start keeps two test processes apart.
 */
export function freePorts(n: number): number[] {
  let range = "32768 60999";
  try {
    range = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range");
  } catch { /* not Linux: the usual range */ }
  const top = Math.min(Number(range.trim().split(/\s+/)[0]) || 32768, 32768);
  const bottom = 20_000;
  nextPort ||= bottom + Math.floor(Math.random() * (top - bottom));
  const ports: number[] = [];
  for (let tries = 0; ports.length < n && tries < top - bottom; tries++) {
    const port = nextPort;
    nextPort = nextPort + 1 >= top ? bottom : nextPort + 1;
    if (handedOut.has(port)) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
    } catch {
      continue; // in use
    }
    handedOut.add(port);
    ports.push(port);
  }
  if (ports.length < n) throw new Error(`no ${n} free loopback ports between ${bottom} and ${top}`);
  return ports;
}

/** One loopback TCP port for a process a test starts (see {@link freePorts}). */
export function freePort(): number {
  return freePorts(1)[0];
}

/**
 * Copies a child's output into `file` as it comes, so a log read mid-test (a failure message's
 * tail) holds what the process wrote so far: `stream.pipeTo(file.writable)` held it all back until
 * the process ended, and every tail read before then was empty. Closes the file at the end.
 */
export function copyToFile(stream: ReadableStream<Uint8Array>, file: Deno.FsFile): Promise<void> {
  const write = (chunk: Uint8Array) => {
    for (let at = 0; at < chunk.length;) at += file.writeSync(chunk.subarray(at));
  };
  return stream.pipeTo(new WritableStream({ write })).catch(() => {}).finally(() => {
    try {
      file.close();
    } catch { /* closed */ }
  });
}
