/**
 * A sweep of lost answers (issue 60, Sieve's intermediate states at the cloud): a reference run of
 * `steps` against a fresh world records the cloud after each step and every mutating request; then,
 * for each of those requests in turn, a fresh world carries it out and loses its answer (a proxy's
 * timeout after the API applied it), each failed step is retried as a controller's backoff would, and
 * the cloud after each step must equal the reference's.
 *
 * @module
 */
import { assertEquals } from "./assert.ts";
import type { TestSim } from "./sim_harness.ts";

/** One world: its simulator, and the steps of the workload against it. */
export interface LostAnswerWorld {
  t: TestSim;
  steps: (() => Promise<unknown>)[];
}

/** What the sweep covered: each write of the reference, by route, in order. */
export interface LostAnswerSweep {
  writes: string[];
}

/**
 * Runs the sweep; `observe` is the cloud as a user sees it (without IDs and addresses), `extra` a
 * further check of each run (no second create, say).
 */
export async function sweepLostAnswers<T>(
  world: () => Promise<LostAnswerWorld>,
  observe: (t: TestSim) => T,
  extra?: (t: TestSim, where: string) => void,
): Promise<LostAnswerSweep> {
  const ref = await world();
  const reference: T[] = [];
  let writes: string[];
  try {
    for (const step of ref.steps) {
      await step();
      reference.push(observe(ref.t));
    }
    writes = ref.t.sim.audit.filter((e) => e.method !== "GET").map((e) => e.route);
  } finally {
    await ref.t.finish();
  }
  for (const [i, route] of writes.entries()) {
    const nth = writes.slice(0, i).filter((r) => r === route).length;
    const name = `${route} #${nth + 1}`;
    const run = await world();
    try {
      const rule = {
        match: `^${route.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
        status: 504,
        code: "timeout",
        html: true,
        applied: true,
        count: 1,
        skip: nth,
      };
      run.t.sim.faults.rules.push(rule);
      const seen: string[] = [];
      for (const [k, step] of run.steps.entries()) {
        for (let attempt = 0; attempt < 5; attempt++) {
          try {
            await step();
            break;
          } catch (err) {
            seen.push((err as Error).message);
          }
        }
        assertEquals(
          observe(run.t),
          reference[k],
          `answer of ${name} lost, step ${k + 1} (failures: ${seen.join(" | ")})`,
        );
      }
      assertEquals(rule.count, 0, `answer of ${name}: the fault must have fired`);
      extra?.(run.t, `answer of ${name} lost`);
    } finally {
      await run.t.finish();
    }
  }
  return { writes };
}
