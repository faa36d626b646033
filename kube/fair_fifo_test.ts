import { assertEquals } from "../testing/assert.ts";
import { FairFifo } from "./fair_fifo.ts";

Deno.test("fair fifo: writers take turns; each writer's keys stay in order; one writer is plain FIFO", () => {
  const q = new FairFifo((key) => key.split("/")[0]);
  for (let i = 0; i < 5; i++) q.push(`burst/${i}`);
  q.push("other/first");
  q.push("third/x");
  assertEquals(q.length, 7);
  const out: string[] = [];
  for (let key = q.shift(); key !== undefined; key = q.shift()) out.push(key);
  assertEquals(out, ["burst/0", "other/first", "third/x", "burst/1", "burst/2", "burst/3", "burst/4"]);
  assertEquals(q.length, 0);
  const plain = new FairFifo(() => "");
  for (const k of ["a", "b", "c"]) plain.push(k);
  assertEquals([plain.shift(), plain.shift(), plain.shift(), plain.shift()], ["a", "b", "c", undefined]);
});
