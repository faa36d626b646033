import { assertEquals } from "../testing/assert.ts";
import { TokenBucket } from "./token_bucket.ts";

Deno.test("token bucket: burst first, then qps", async () => {
  let now = 0;
  const bucket = new TokenBucket(10, 3, () => now);
  for (let i = 0; i < 3; i++) await bucket.take();
  let fourth = false;
  const p = bucket.take().then(() => fourth = true);
  await new Promise((r) => setTimeout(r, 20));
  assertEquals(fourth, false, "the fourth token waits for a refill");
  now += 100; // 10 qps: one token per 100 ms
  await p;
  assertEquals(fourth, true);
});
