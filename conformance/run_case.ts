/**
 * Runs one case against our CCM exactly as the golden README describes and returns each phase's
 * normalized state.
 *
 * @module
 */
import type { Case, PhaseState } from "./case_file.ts";
import { CaseEnvironment } from "./case_environment.ts";
import { type ConvergenceOptions, DOCUMENTED_CONVERGENCE, waitForConvergence } from "./convergence.ts";
import { Normalizer, observe } from "./observe.ts";

/** One phase of our run. */
export interface ObservedPhase {
  phase: string;
  converged: boolean;
  state: PhaseState;
  warningMessages: Record<string, string[]>;
  secondsToLastChange: number;
  api: { requests: number; mutations: number; errors: Record<string, number> };
}

/** A case's run: its phases, and the CCM's exit code if it stopped by itself. */
export interface CaseRun {
  phases: ObservedPhase[];
  ccmExit?: number;
  ccmOutput: string;
  seconds: number;
}

/** Runs `testCase`; `convergence` may shorten the waits for development. */
export async function runCase(
  testCase: Case,
  convergence: ConvergenceOptions = DOCUMENTED_CONVERGENCE,
): Promise<CaseRun> {
  const started = Date.now();
  const env = await CaseEnvironment.start(testCase);
  const norm = new Normalizer();
  const phases: ObservedPhase[] = [];
  let ccmExit: number | undefined;
  let exitedBefore: number | undefined;
  let output = "";
  try {
    await env.seedWorld();
    await env.registerNodes();
    if (testCase.services_before_ccm) {
      await env.createServices();
      await env.seedLoadBalancers();
    } else {
      await env.seedLoadBalancers();
    }
    env.sim.audit.length = 0;
    await env.startCcm();
    env.ccm!.status.then((s) => ccmExit = s.code);
    const record = async (phase: string, startedAt: number) => {
      const end = await waitForConvergence(env, startedAt, convergence);
      const observation = await observe(env, norm);
      const audit = env.sim.audit.filter((e) => e.time >= startedAt);
      const errors: Record<string, number> = {};
      for (const e of audit) {
        if (e.status >= 400) errors[`${e.status} ${e.route}`] = (errors[`${e.status} ${e.route}`] ?? 0) + 1;
      }
      phases.push({
        phase,
        converged: end.converged,
        state: observation.state,
        warningMessages: observation.warningMessages,
        secondsToLastChange: end.secondsToLastChange,
        api: { requests: audit.length, mutations: audit.filter((e) => e.method !== "GET").length, errors },
      });
    };
    const initialStart = Date.now();
    if (!testCase.services_before_ccm) await env.createServices();
    await record("initial", env.ccmStartedAt || initialStart);
    for (const [i, step] of (testCase.steps ?? []).entries()) {
      const at = Date.now();
      await env.applyStep(step);
      await record(`step${i + 1}:${step.action}`, at);
    }
  } finally {
    exitedBefore = ccmExit;
    output = env.ccm?.output() ?? "";
    await env.stop();
  }
  return { phases, ccmExit: exitedBefore, ccmOutput: output, seconds: (Date.now() - started) / 1000 };
}
