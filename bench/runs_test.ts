import { assertEquals } from "../testing/assert.ts";
import { median, repeated } from "./runs.ts";

Deno.test("bench runs: the median run's figures, the minimum beside them, a load average per run", async () => {
  assertEquals([median([3, 1, 2]), median([4, 1, 3, 2]), median([5])], [2, 2, 5]);
  const seconds = [12, 9, 30];
  let i = 0;
  const result = await repeated(3, () => {
    const s = seconds[i++];
    return Promise.resolve({
      seconds_total: s,
      cpu_seconds: s / 3,
      rss_mb_peak: 80 + s,
      requests: 14,
      rate_limited_responses: 0,
    });
  });
  assertEquals([
    result.seconds_total,
    result.seconds_total_min,
    result.cpu_seconds_min,
    result.rss_mb_peak_min,
  ], [
    12,
    9,
    3,
    89,
  ]);
  assertEquals([result.runs, (result.load_average as number[]).length], [3, 3]);
});
