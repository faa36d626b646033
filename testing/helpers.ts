/**
 * Small helpers shared by the tests.
 *
 * @module
 */
import { setupLogging } from "../lib/log.ts";
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

/** Polls `check` until it returns true; fails after `timeoutMs` (default 20 s). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) {
      throw new Error(`condition not met within ${timeoutMs} ms: ${check.toString().slice(0, 160)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Logs only errors during tests unless TEST_LOG_LEVEL asks for more. */
export function quietLogs(): void {
  const level = (Deno.env.get("TEST_LOG_LEVEL") ?? "error") as "debug" | "info" | "warning" | "error";
  setupLogging({ level, format: "text" });
}

/** A loopback TCP port free right now (for a CCM's status server in a test). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
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
