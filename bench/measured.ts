/**
 * The stamp every figure of the report carries: when, on which commit, how many runs and at what load
 * (docs review: a figure an operator cannot trace to a dated run is no figure).
 *
 * @module
 */
import type { ScenarioResult } from "./report.ts";
import { loadAverage } from "./runs.ts";

const HERE = new URL(".", import.meta.url).pathname;

/** When, on what code and how often a scenario (or a steady-state run) was measured. */
export interface Measured {
  /** The day the runs ended (UTC, YYYY-MM-DD). */
  date: string;
  /** The commit measured (short hash, `-dirty` when the tree had changes). */
  commit: string;
}

/** The stamp of a run made now: today's date and the checked-out commit. */
export async function measuredNow(): Promise<Measured> {
  const git = async (...args: string[]) =>
    new TextDecoder().decode(
      (await new Deno.Command("git", { args, cwd: HERE, stdout: "piped", stderr: "null" }).output()).stdout,
    ).trim();
  const commit = await git("rev-parse", "--short", "HEAD") || "unknown";
  // Only the code counts: the benchmark's own outputs change with every run.
  const dirty = (await git("status", "--porcelain", "--", ".", ":!bench/report.*", ":!bench/series.json"))
    .length > 0;
  return { date: new Date().toISOString().slice(0, 10), commit: dirty ? `${commit}-dirty` : commit };
}

/**
 * Stamps what was measured now and is not stamped yet: each scenario and each steady-state run, with
 * `runs` and the load average at its start when the scenario ran once.
 */
export function stamp(
  results: Record<string, ScenarioResult>,
  now: Measured,
  load: number = loadAverage(),
): void {
  for (const r of Object.values(results)) {
    r.measured ??= now;
    r.runs ??= 1;
    r.load_average ??= [load];
    for (const run of (r.matrix as Record<string, unknown>[] | undefined) ?? []) run.measured ??= now;
  }
}
