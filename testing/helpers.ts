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

export { freePort, freePorts } from "./ports.ts";

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
