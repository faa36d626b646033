import { assert, assertEquals } from "../testing/assert.ts";
import { runWorkers, WorkQueue } from "./work_queue.ts";
import { Registry } from "../lib/metrics.ts";

Deno.test("work queue: a key waiting or in process is not duplicated, and is re-queued after a change", async () => {
  const q = new WorkQueue("t");
  q.add("a");
  q.add("a");
  q.add("b");
  assertEquals(q.length, 2);
  const first = await q.get();
  assertEquals(first, "a");
  q.add("a"); // changed while processing: not handed to another worker now
  assertEquals(await q.get(), "b");
  assertEquals(q.length, 0);
  q.done("a");
  assertEquals(q.length, 1, "re-queued once done");
  q.shutDown();
});

Deno.test("work queue: per-key exponential backoff, forget, and fixed retry-after", async () => {
  const q = new WorkQueue("t", { baseDelayMs: 10, maxDelayMs: 40 });
  assertEquals([0, 1, 2, 3, 9].map((n) => q.backoffFor(n)), [10, 20, 40, 40, 40]);
  const registry = new Registry();
  const queue = new WorkQueue("w", { baseDelayMs: 5, metrics: registry });
  const attempts: Record<string, number> = {};
  const started = Date.now();
  const workers = runWorkers(queue, (key) => {
    attempts[key] = (attempts[key] ?? 0) + 1;
    if (key === "flaky" && attempts[key] < 4) return Promise.reject(new Error("boom"));
    if (key === "later" && attempts[key] === 1) {
      return Promise.reject(Object.assign(new Error("busy"), { retryAfterMs: 50 }));
    }
    return Promise.resolve();
  }, { workers: 2 });
  queue.add("flaky");
  queue.add("later");
  queue.add("ok");
  while ((attempts.flaky ?? 0) < 4 || (attempts.later ?? 0) < 2) await new Promise((r) => setTimeout(r, 5));
  assert(Date.now() - started >= 50, "retry-after delay honoured");
  assertEquals(attempts.ok, 1);
  assertEquals(queue.retries("flaky"), 0, "success forgets failures");
  assertEquals(registry.counter("workqueue_retries_total", "").get({ name: "w" }), 3);
  queue.shutDown();
  await workers;
});

Deno.test("work queue: a terminal error reaches onTerminal once and waits; a cancelled reconcile is not retried", async () => {
  const queue = new WorkQueue("t", { baseDelayMs: 5 });
  const stop = new AbortController();
  const attempts: Record<string, number> = {};
  const terminal: string[] = [];
  const workers = runWorkers(queue, (key, signal) => {
    attempts[key] = (attempts[key] ?? 0) + 1;
    if (key === "bad-input") return Promise.reject(new Error("cannot work"));
    // "slow" is under way when the work is cancelled, and fails with the signal's reason.
    return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
  }, {
    policy: (err) => (err as Error).message === "cannot work" ? "forget" : undefined,
    signal: stop.signal,
    workers: 2,
    onTerminal: (key) => terminal.push(key),
  });
  queue.add("bad-input");
  queue.add("slow");
  await new Promise((r) => setTimeout(r, 50));
  stop.abort(new Error("shutting down"));
  await new Promise((r) => setTimeout(r, 50));
  assertEquals(terminal, ["bad-input"]);
  assertEquals([attempts["bad-input"], attempts.slow], [1, 1], "neither is retried");
  assertEquals(queue.retries("slow"), 0);
  queue.shutDown();
  await workers;
});

Deno.test("work queue: retryFailedNow queues the keys waiting out a failure's backoff, and only those", async () => {
  const q = new WorkQueue("t", { baseDelayMs: 60_000 });
  q.addRateLimited("failed"); // waits 60 s
  q.addAfter("later", 60_000); // a plain delay, no failure
  assertEquals(q.length, 0);
  assertEquals(q.retryFailedNow(), ["failed"]);
  assertEquals(await q.get(), "failed");
  q.done("failed");
  assertEquals(q.length, 0, "the plain delay still waits");
  assertEquals(q.retries("failed"), 1, "its failures still count until it succeeds");
  q.shutDown();
});
