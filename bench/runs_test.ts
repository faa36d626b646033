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

Deno.test("bench runs: a scenario's own key picks the median run; spread fields are their own medians, every run's value kept", async () => {
  const perHour = [33, 30, 31];
  let i = 0;
  const result = await repeated(3, () => {
    const n = perHour[i];
    return Promise.resolve({
      requests: 0,
      rate_limited_responses: 0,
      requests_per_hour: n,
      rss_mb_peak: 90 + i++,
      cpu_seconds: 10 + i,
    });
  }, { key: (r) => r.requests_per_hour ?? 0, spread: ["requests_per_hour", "rss_mb_peak"] });
  assertEquals(result.requests_per_hour, 31, "the median by requests/hour");
  assertEquals(result.cpu_seconds, 13, "the chosen run's own figures where no spread is asked for");
  assertEquals(result.requests_per_hour_runs, [33, 30, 31]);
  assertEquals([result.requests_per_hour_min, result.rss_mb_peak_min], [30, 90]);
  assertEquals(result.rss_mb_peak_runs, [90, 91, 92]);

  // Runs tied on the key (34 requests/hour in each): memory is its own median, not the first run's.
  const rss = [164.3, 142.5, 147.5];
  let j = 0;
  const tied = await repeated(
    3,
    () =>
      Promise.resolve({
        requests: 0,
        rate_limited_responses: 0,
        requests_per_hour: 34,
        rss_mb_peak: rss[j++],
      }),
    {
      key: (r) => r.requests_per_hour ?? 0,
      spread: ["requests_per_hour", "rss_mb_peak"],
    },
  );
  assertEquals([tied.requests_per_hour, tied.rss_mb_peak, tied.rss_mb_peak_min], [34, 147.5, 142.5]);
});
