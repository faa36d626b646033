/**
 * `deno task explore`: a campaign of the seeded swarm, or the crash-point sweep.
 *
 *     deno task explore --seeds N [--from S] [--minutes M] [--steps K] [--workload V] [--report FILE]
 *     deno task explore --crash-points [--limit N] [--report FILE]
 *
 * Prints a summary and each violation with the command that replays it; writes the JSON report
 * when asked; exits 1 when the run found a violation (or missed a window it must reach).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { runCampaign, sweepCrashPoints } from "./mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seeds: { type: "string" },
    from: { type: "string" },
    minutes: { type: "string" },
    steps: { type: "string" },
    workload: { type: "string" },
    report: { type: "string" },
    "crash-points": { type: "boolean" },
    limit: { type: "string" },
  },
});
const num = (v: string | undefined, name: string): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(v)) {
    console.error(`--${name}: "${v}" is not a number`);
    Deno.exit(2);
  }
  return Number(v);
};
// Progress on a terminal only (a CI log would get every line).
const progress = (text: string) => {
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(new TextEncoder().encode(`\r${text}   `));
};

let ok: boolean;
let report: unknown;
if (values["crash-points"]) {
  const r = await sweepCrashPoints({
    limit: num(values.limit, "limit"),
    onRun: (done, total) => progress(`crash points: ${done}/${total} runs`),
  });
  progress("\n");
  console.log(
    `crash points: ${r.crash_points} writes in the reference, ${r.covered} covered, ${r.runs} runs in ${r.seconds} s ` +
      `(${r.schedules_per_minute} a minute), ${r.violations.length} violations`,
  );
  for (const v of r.violations.slice(0, 20)) {
    console.log(
      `  ${v.property} at write ${v.write.index} (${v.write.kind} ${v.write.route}), ${v.mode}: ${
        v.detail.slice(0, 400)
      }`,
    );
  }
  ok = r.ok;
  report = r;
} else {
  const r = await runCampaign({
    seeds: num(values.seeds, "seeds"),
    from: num(values.from, "from"),
    minutes: num(values.minutes, "minutes"),
    steps: num(values.steps, "steps"),
    workload: num(values.workload, "workload"),
    onSchedule: (seed, found) => progress(`seed ${seed}${found ? `: ${found} violations` : ""}`),
  });
  progress("\n");
  console.log(
    `explored ${r.seeds} schedules from seed ${r.from} in ${r.seconds} s (${r.schedules_per_minute} a minute), ` +
      `${r.crashes} crashes, ${r.violations.length} violations`,
  );
  for (const v of r.violations.slice(0, 20)) {
    console.log(
      `  ${v.property} (seed ${v.seed}, step ${v.step}): ${v.detail.slice(0, 400)}\n    replay: ${v.replay}`,
    );
  }
  console.log(`windows: ${JSON.stringify(r.windows)}`);
  if (r.windows_missing.length) console.log(`windows never reached: ${r.windows_missing.join("; ")}`);
  ok = r.ok;
  report = r;
}
if (values.report) await Deno.writeTextFile(values.report, JSON.stringify(report, null, 2) + "\n");
Deno.exit(ok ? 0 : 1);
