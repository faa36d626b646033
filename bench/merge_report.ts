/**
 * Adds the steady-state runs of another benchmark report (a run of other sizes, made elsewhere) to
 * this one's matrix, replacing runs of the same size and design, takes the headline row from the
 * merged matrix, and writes the report again.
 *
 *   deno run --allow-read --allow-write --allow-run bench/merge_report.ts <other report.json>
 *
 * @module
 */
import { type ScenarioResult, writeReport } from "./report.ts";
import { headline, type SteadyRun } from "./steady_state.ts";

if (import.meta.main) {
  const here = new URL("report.json", import.meta.url);
  const mine = JSON.parse(await Deno.readTextFile(here));
  const other = JSON.parse(await Deno.readTextFile(Deno.args[0]));
  type Run = { nodes: number; refresh: string };
  const added: Run[] = other.steady_state?.matrix ?? [];
  const key = (r: Run) => `${r.nodes}:${r.refresh}`;
  const kept = (mine.steady_state.matrix as Run[]).filter((r) => !added.some((a) => key(a) === key(r)));
  const matrix = [...kept, ...added].sort((a, b) => a.nodes - b.nodes);
  // The headline row is the matrix's 1000-Node default run, whichever report it came from.
  mine.steady_state = { ...headline(matrix as SteadyRun[]), skipped: mine.steady_state.skipped };
  const { rate_limited_responses: _, parameters, ...results } = mine;
  // The chart's series live beside the report: kept as they are.
  const series = JSON.parse(await Deno.readTextFile(new URL("series.json", import.meta.url)));
  for (const [name, value] of Object.entries(results)) (value as ScenarioResult).series = series[name];
  await writeReport(results as Record<string, ScenarioResult>, {
    latencyMs: parameters.api_latency_ms,
    actionMs: parameters.action_ms,
  });
}
