import { assertEquals } from "../testing/assert.ts";
import type { ScenarioResult } from "./report.ts";
import { stamp } from "./measured.ts";

Deno.test("measured: what ran now is stamped with the day, commit, runs and load; older figures keep theirs", () => {
  const older = { date: "2026-11-22", commit: "747fdcb" };
  const results: Record<string, ScenarioResult> = {
    faults: { requests: 1, rate_limited_responses: 0, measured: older, runs: 1 },
    churn: { requests: 2, rate_limited_responses: 0, runs: 3, load_average: [0.1, 0.2, 0.3] },
    steady_state: {
      requests: 3,
      rate_limited_responses: 0,
      matrix: [{ nodes: 1000 }, { nodes: 5000, measured: older }],
    },
  };
  const now = { date: "2026-11-29", commit: "abc1234-dirty" };
  stamp(results, now, 0.5);
  assertEquals(results.faults.measured, older);
  assertEquals([results.churn.measured, results.churn.runs, results.churn.load_average], [now, 3, [
    0.1,
    0.2,
    0.3,
  ]]);
  assertEquals([results.steady_state.runs, results.steady_state.load_average], [1, [0.5]]);
  assertEquals((results.steady_state.matrix as { measured: unknown }[]).map((r) => r.measured), [now, older]);
});
