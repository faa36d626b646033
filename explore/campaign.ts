/**
 * A campaign of the seeded swarm: schedules from consecutive seeds until the count or the time
 * runs out, and the report `deno task explore --report` writes (JSON): what ran, how fast, every
 * violation with its replay command, and how often each window worth reaching was reached.
 *
 * A campaign of at least {@link WINDOW_GUARD_SEEDS} schedules that never reached one of
 * {@link WINDOWS} fails: a swarm that stopped reaching a window proves nothing about it.
 *
 * @module
 */
import { replayCommand, runSchedule, type ScheduleOptions } from "./schedule.ts";
import { WORKLOAD_VERSION } from "./workload.ts";

/** Windows a campaign of any workload must reach (see schedule.ts and workload.ts for where each is counted). */
export const WINDOWS = [
  "crash before-answer of a cloud write",
  "crash after-answer of a cloud write",
  "crash before-answer of a kube write",
  "crash after-answer of a kube write",
  "crash between a balancer create and its status write",
  "create answer lost",
  "cloud answer lost",
  "kube answer lost",
  "429 during a target change",
  "crash behind a lagging apiserver",
  "restart behind a lagging apiserver",
  "service recreated behind a lagging view",
] as const;

/** The windows a campaign of workload `version` must reach: {@link WINDOWS} and its own steps'. */
export function windowsOf(version: number): string[] {
  return [
    ...WINDOWS,
    ...(version >= 2 ? ["watches closed mid-stream"] : []),
    ...(version >= 4 ? ["leader cut off from the apiserver", "leader deposed while cut off"] : []),
    ...(version >= 5 ? ["node replaced behind a lagging view"] : []),
  ];
}

/** Below this many schedules a missing window is reported, not failed. */
export const WINDOW_GUARD_SEEDS = 200;

/** Settings of a campaign. */
export interface CampaignOptions extends ScheduleOptions {
  /** Schedules to run (default 100). */
  seeds?: number;
  /** The first seed (default 1). */
  from?: number;
  /** Stop starting schedules after this many minutes (default: no limit). */
  minutes?: number;
  /** Called after each schedule (progress). */
  onSchedule?: (seed: number, violations: number) => void;
}

/** One violation as reported. */
export interface ReportedViolation {
  /** The property broken. */
  property: string;
  /** The schedule's seed. */
  seed: number;
  /** The step after which it was seen (-1: in the liveness phase). */
  step: number;
  /** What was seen. */
  detail: string;
  /** The command that replays the schedule. */
  replay: string;
}

/** The campaign report (JSON). */
export interface CampaignReport {
  /** When it ran (ISO 8601). */
  date: string;
  /** The first seed. */
  from: number;
  /** Schedules run. */
  seeds: number;
  /** Its wall time. */
  seconds: number;
  /** Schedules run per minute of wall time. */
  schedules_per_minute: number;
  /** Workload steps per schedule. */
  steps_per_schedule: number;
  /** Writes of the CCM (cloud and Kubernetes) in all schedules. */
  writes: number;
  /** Crashes of the CCM in all schedules. */
  crashes: number;
  /** Every violation, with its replay command. */
  violations: ReportedViolation[];
  /** Violations counted by property. */
  violations_by_property: Record<string, number>;
  /** Windows reached, with counts. */
  windows: Record<string, number>;
  /** Windows of {@link WINDOWS} never reached. */
  windows_missing: string[];
  /** Whether the campaign passes: no violation, and every window reached when the guard applies. */
  ok: boolean;
}

/** Runs the campaign. */
export async function runCampaign(options: CampaignOptions = {}): Promise<CampaignReport> {
  const count = options.seeds ?? 100;
  const from = options.from ?? 1;
  const started = performance.now();
  const deadline = options.minutes === undefined ? Infinity : started + options.minutes * 60_000;
  const windows = new Map<string, number>();
  const violations: ReportedViolation[] = [];
  let ran = 0;
  let writes = 0;
  let crashes = 0;
  for (let seed = from; seed < from + count && performance.now() < deadline; seed++) {
    const result = await runSchedule(seed, options);
    ran++;
    writes += result.writes;
    crashes += result.crashes;
    for (const [name, n] of result.windows) windows.set(name, (windows.get(name) ?? 0) + n);
    for (const v of result.violations) {
      violations.push({
        property: v.property,
        seed,
        step: v.step,
        detail: v.detail,
        replay: replayCommand(seed, options.workload),
      });
    }
    options.onSchedule?.(seed, result.violations.length);
  }
  const seconds = (performance.now() - started) / 1000;
  const byProperty: Record<string, number> = {};
  for (const v of violations) byProperty[v.property] = (byProperty[v.property] ?? 0) + 1;
  const missing = windowsOf(options.workload ?? WORKLOAD_VERSION).filter((w) => !windows.has(w));
  return {
    date: new Date().toISOString(),
    from,
    seeds: ran,
    seconds: Math.round(seconds * 10) / 10,
    schedules_per_minute: Math.round(ran / (seconds / 60)),
    steps_per_schedule: options.steps ?? 30,
    writes,
    crashes,
    violations,
    violations_by_property: byProperty,
    windows: Object.fromEntries([...windows].sort((a, b) => a[0].localeCompare(b[0]))),
    windows_missing: missing,
    ok: violations.length === 0 && (ran < WINDOW_GUARD_SEEDS || missing.length === 0),
  };
}
