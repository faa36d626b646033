/**
 * The golden README's convergence rule: a phase ends once, for 10 s in a row, the simulator saw no
 * request but `GET` and no Node, Service or Event changed in Kubernetes, and at least 4 s have passed
 * since the phase began; after 120 s it ends unconverged.
 *
 * @module
 */
import { EVENTS, NODES, SERVICES } from "../kube/resources.ts";
import type { CaseEnvironment } from "./case_environment.ts";

/** Timing of the rule (the README's values by default). */
export interface ConvergenceOptions {
  quietMs: number;
  minimumMs: number;
  timeoutMs: number;
  pollMs: number;
}

/** The README's values. */
export const DOCUMENTED_CONVERGENCE: ConvergenceOptions = {
  quietMs: 10_000,
  minimumMs: 4_000,
  timeoutMs: 120_000,
  pollMs: 250,
};

/** How a phase ended. */
export interface PhaseEnd {
  converged: boolean;
  /** Time from the phase start to the last change seen. */
  secondsToLastChange: number;
}

/** Waits for the phase that began at `startedAt` to converge. */
export async function waitForConvergence(
  env: CaseEnvironment,
  startedAt: number,
  options: ConvergenceOptions = DOCUMENTED_CONVERGENCE,
): Promise<PhaseEnd> {
  let fingerprint = "";
  let lastChange = startedAt;
  let auditSeen = 0;
  for (;;) {
    const now = Date.now();
    const audit = env.sim.audit;
    for (; auditSeen < audit.length; auditSeen++) {
      const e = audit[auditSeen];
      if (e.method !== "GET" && e.time >= startedAt) lastChange = Math.max(lastChange, e.time);
    }
    const current = await kubeFingerprint(env);
    if (current !== fingerprint) {
      if (fingerprint !== "") lastChange = now;
      fingerprint = current;
    }
    const end = { secondsToLastChange: Math.round((lastChange - startedAt) / 100) / 10 };
    if (now - lastChange >= options.quietMs && now - startedAt >= options.minimumMs) {
      return { converged: true, ...end };
    }
    if (now - startedAt >= options.timeoutMs) return { converged: false, ...end };
    await new Promise((r) => setTimeout(r, options.pollMs));
  }
}

async function kubeFingerprint(env: CaseEnvironment): Promise<string> {
  const lists: { items: unknown[] }[] = await Promise.all([
    env.client.listAll(NODES),
    env.client.listAll(SERVICES),
    env.client.listAll(EVENTS),
  ]);
  return lists.map((l) =>
    l.items.map((o) => {
      const m =
        (o as { metadata?: { namespace?: string; name?: string; resourceVersion?: string } }).metadata;
      return `${m?.namespace}/${m?.name}@${m?.resourceVersion}`;
    }).sort().join(",")
  ).join("|");
}
