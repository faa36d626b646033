/**
 * The explorer (issue 60): the CCM in one deterministic process, driven by one seed — a seeded
 * swarm of workloads and faults with invariants after every step, and a sweep that crashes the CCM
 * around every write of a reference run. `deno task explore` runs either; see docs/explanation/exploration.md.
 *
 * @module
 */
export {
  type CampaignOptions,
  type CampaignReport,
  type ReportedViolation,
  runCampaign,
  WINDOW_GUARD_SEEDS,
  WINDOWS,
  windowsOf,
} from "./campaign.ts";
export {
  CRASH_MODES,
  type CrashPointFailure,
  type CrashPointReport,
  sweepCrashPoints,
} from "./crash_points.ts";
export {
  replayCommand,
  runSchedule,
  type ScheduleOptions,
  type ScheduleResult,
  STEADY_MAX_REQUESTS,
} from "./schedule.ts";
export type { CrashMode, WriteSeen } from "./cluster.ts";
export type { Violation } from "./invariants.ts";
