/** The test helpers: a failing `eventually` shows what was logged meanwhile, at every level. */
import { assert, assertRejects } from "./assert.ts";
import { eventually, quietLogs } from "./helpers.ts";
import { logger } from "../lib/log.ts";

Deno.test("helpers: a failing eventually carries the last log lines, debug ones too (a flake explains itself)", async () => {
  quietLogs();
  logger("service").debug("node sync: {n} balancers stale", { n: 1 });
  const err = await assertRejects(() => eventually(() => false, 50), Error);
  assert(err.message.startsWith("condition not met within 50 ms"), err.message);
  assert(err.message.includes("node sync: 1 balancers stale"), err.message);
});
