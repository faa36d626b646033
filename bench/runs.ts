/**
 * A scenario run several times (`--runs N`): one machine's figures vary with its load (the burst
 * measured 10.9–13.3 s in four runs of one hour), so a figure is reported as the median run's, with
 * the minimum beside it and the load average each run started at.
 *
 * @module
 */
import type { ScenarioResult } from "./report.ts";

/** The 1-minute load average now (0 where /proc is missing). */
export function loadAverage(): number {
  try {
    return Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]) || 0;
  } catch {
    return 0;
  }
}

/** The middle value (the lower of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/**
 * Runs `scenario` `runs` times; returns the median run's result (by `key`: `seconds_total`, else CPU)
 * with `runs`, `seconds_total_min`, `cpu_seconds_min`, `rss_mb_peak_min` and each run's starting
 * `load_average` added; for each field named in `spread`, its own median (not the chosen run's value:
 * runs tied on the key would otherwise pick one run's memory, the highest of three at 5000 Nodes),
 * every run's value as `<field>_runs` and the least as `<field>_min`.
 */
export async function repeated(
  runs: number,
  scenario: () => Promise<ScenarioResult>,
  options: { key?: (r: ScenarioResult) => number; spread?: string[] } = {},
): Promise<ScenarioResult> {
  const results: ScenarioResult[] = [];
  const loads: number[] = [];
  for (let i = 0; i < Math.max(1, runs); i++) {
    loads.push(loadAverage());
    results.push(await scenario());
  }
  const key = options.key ?? ((r: ScenarioResult) => r.seconds_total ?? r.cpu_seconds ?? 0);
  const middle = median(results.map(key));
  const chosen = results.find((r) => key(r) === middle)!;
  const min = (pick: (r: ScenarioResult) => number | undefined) => {
    const values = results.map(pick).filter((v): v is number => typeof v === "number");
    return values.length ? Math.min(...values) : undefined;
  };
  const spread: Record<string, unknown> = {};
  for (const field of options.spread ?? []) {
    const values = results.map((r) => r[field]);
    const numbers = values.filter((v): v is number => typeof v === "number");
    if (numbers.length) spread[field] = median(numbers);
    spread[`${field}_runs`] = values;
    spread[`${field}_min`] = min((r) => r[field] as number | undefined);
  }
  return {
    ...chosen,
    ...spread,
    runs: results.length,
    seconds_total_min: min((r) => r.seconds_total),
    cpu_seconds_min: min((r) => r.cpu_seconds),
    rss_mb_peak_min: min((r) => r.rss_mb_peak),
    load_average: loads,
  };
}
