/**
 * The fake clock moves only when told, fires timers in time order, and knows when the work queues
 * made on it have nothing left to do.
 */
import { assertEquals, assertRejects } from "./assert.ts";
import { FakeClock } from "./fake_clock.ts";
import { sleepOn } from "../lib/clock.ts";
import { runWorkers, WorkQueue } from "../kube/work_queue.ts";

Deno.test("fake clock: timers fire in time order as time is advanced, never on their own", async () => {
  const clock = new FakeClock(0);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push("t300"), 300);
  const every = clock.setInterval(() => fired.push(`i@${clock.now()}`), 100);
  const cancelled = clock.setTimeout(() => fired.push("never"), 50);
  clock.clearTimeout(cancelled);
  await new Promise((r) => setTimeout(r, 20)); // real time passing moves nothing
  assertEquals(fired, []);
  await clock.advance(350);
  assertEquals(fired, ["i@100", "i@200", "t300", "i@300"], "due together: in the order they were set");
  assertEquals(clock.now(), 350);
  clock.clearInterval(every);
  await clock.advance(1_000);
  assertEquals(fired.length, 4);
  assertEquals(clock.pending, 0);
});

Deno.test("fake clock: a sleep ends when time reaches it, or rejects when its signal aborts", async () => {
  const clock = new FakeClock(0);
  let woke = false;
  const sleep = sleepOn(clock, 1_000).then(() => woke = true);
  await clock.advance(999);
  assertEquals(woke, false);
  await clock.advance(1);
  await sleep;
  assertEquals(woke, true);
  const stop = new AbortController();
  const cut = sleepOn(clock, 1_000, stop.signal);
  stop.abort(new Error("stopped"));
  assertEquals((await assertRejects(() => cut, Error)).message, "stopped");
  assertEquals(clock.pending, 0, "the aborted sleep's timer is gone");
});

Deno.test("fake clock: settle waits for a work queue's keys, backoff waits for time", async () => {
  const clock = new FakeClock(0);
  const queue = new WorkQueue("test", { clock, baseDelayMs: 60_000 });
  const done: string[] = [];
  let failOnce = true;
  const stop = new AbortController();
  const workers = runWorkers(queue, async (key) => {
    await Promise.resolve(); // a reconcile that takes a few steps
    if (key === "flaky" && failOnce) {
      failOnce = false;
      throw new Error("try again");
    }
    done.push(key);
  }, { signal: stop.signal });
  queue.add("a");
  queue.add("flaky");
  queue.addAfter("later", 5_000);
  await clock.settle();
  assertEquals(done, ["a"], "the failure waits out its backoff; the delayed key its delay");
  await clock.advance(5_000);
  assertEquals(done, ["a", "later"]);
  await clock.advance(60_000);
  assertEquals(done, ["a", "later", "flaky"], "retried after a minute of fake time");
  stop.abort();
  queue.shutDown();
  await workers;
});
