/**
 * One schedule of the seeded swarm (VOPR's shape): from one seed, a workload of random steps under
 * random faults — cloud errors, answers lost after the API applied a write, CCM crashes around its
 * writes, a lagging or compacted apiserver — with safety checked after every step; then the calm
 * (faults stop, servers on, kubelets Ready) and, after twelve simulated minutes, liveness; then ten
 * more minutes in which the CCM's requests must fall back to the steady state.
 *
 * Everything runs in one process on the fake clock: the same seed makes the same requests in the
 * same order, so a violation replays with `deno task explore --seeds 1 --from <seed>`.
 *
 * @module
 */
import type { Event, Service } from "kubernetes-types/core/v1.d.ts";
import { pick } from "../lib/random.ts";
import { NODE_CHANGE_REFILL_MS } from "../controllers/mod.ts";
import { SERVICE_UID_LABEL } from "../providers/hcloud/mod.ts";
import { ExploreCluster } from "./cluster.ts";
import { Safety, seedForeign, type Violation } from "./invariants.ts";
import { liveness } from "./liveness.ts";
import { Workload, WORKLOAD_VERSION } from "./workload.ts";

/** Settings of one schedule. */
export interface ScheduleOptions {
  /** Workload steps before the calm (default 30). */
  steps?: number;
  /** Chance that the CCM crashes around one of its writes (default 0.02). */
  crashRate?: number;
  /** Chance that the answer to one of its writes is lost (default 0.03). */
  lostRate?: number;
  /** The workload's version (default the newest): a kept seed replays with the one it was found with. */
  workload?: number;
  /** Keep every request in the result (to compare two runs). */
  keepRequests?: boolean;
}

/** What one schedule did and found. */
export interface ScheduleResult {
  /** Its seed. */
  seed: number;
  /** The steps, as the workload names them. */
  trail: string[];
  /** Violations, each with the step after which it was seen (-1: liveness). */
  violations: (Violation & { step: number })[];
  /** Windows reached, with counts. */
  windows: Map<string, number>;
  /** Writes of the CCM (cloud and Kubernetes). */
  writes: number;
  /** Cloud requests in the ten quiet minutes after liveness. */
  steadyRequests: number;
  /** Crashes of the CCM. */
  crashes: number;
  /**
   * A hash of every request the run made, in order (cloud and Kubernetes, with answers): two runs
   * of one seed must give the same.
   */
  fingerprint: string;
  /** Every request, when asked for. */
  requests?: string[];
}

/**
 * Cloud requests ten quiet minutes may cost a settled cluster of up to five Nodes and four
 * Services. Measured (2026-11-29) at 23 on every seed: 20 route passes (one network read each at
 * the chart's 30 s period), 2 server lists, 1 balancer list. A loop that polled per Node or per
 * Service even once in the ten minutes would add at least four.
 */
export const STEADY_MAX_REQUESTS = 26;

/** How long the calm lasts before liveness is judged: longer than the 10-minute drift repair period. */
const CALM_MS = 12 * 60_000;

/** The command that replays `seed` (with an older workload, `workload`). */
export function replayCommand(seed: number, workload = WORKLOAD_VERSION): string {
  const version = workload === WORKLOAD_VERSION ? "" : ` --workload ${workload}`;
  return `deno task explore --seeds 1 --from ${seed}${version}`;
}

/** Runs one schedule; never throws for what the CCM does (a violation says it). */
export async function runSchedule(seed: number, options: ScheduleOptions = {}): Promise<ScheduleResult> {
  const steps = options.steps ?? 30;
  const crashRate = options.crashRate ?? 0.02;
  const lostRate = options.lostRate ?? 0.03;
  const version = options.workload ?? WORKLOAD_VERSION;
  // From workload 3 the balancers drain leaving Nodes (the draining race of issue 41 lives there).
  // From workload 4 two replicas contend for the lease.
  const c = new ExploreCluster(seed, { drain: version >= 3, replicas: version >= 4 ? 2 : 1 });
  const workload = new Workload(c, version);
  const trail: string[] = [];
  const violations: ScheduleResult["violations"] = [];
  let steadyRequests = 0;
  c.onWrite = (write) => {
    const x = c.random();
    if (x < crashRate) {
      const mode = (["before-answer", "after-answer"] as const)[pick(c.random, 2)];
      noteCrashWindows(c, write.kind, mode);
      return mode;
    }
    if (x < crashRate + lostRate) {
      c.reached(write.route === "POST /load_balancers" ? "create answer lost" : `${write.kind} answer lost`);
      return "answer-lost";
    }
    return undefined;
  };
  try {
    await seedForeign(c);
    await c.ensureRunning();
    await workload.joinNodes(2);
    await c.clock.advance(30_000);
    const safety = new Safety(c, workload.memory);
    safety.check();
    for (let step = 0; step < steps; step++) {
      const crashesBefore = c.crashes;
      trail.push(await workload.step() ?? "nothing");
      await c.clock.advance(1_000 + pick(c.random, 30_000));
      if (c.crashes > crashesBefore) {
        if (c.apiserver.watchDelayMs > 0) c.reached("restart behind a lagging apiserver");
        trail.push("CCM restarted");
      }
      await c.ensureRunning();
      for (const v of safety.check()) violations.push({ ...v, step });
      if (violations.length) break; // the first one is what a replay needs
    }
    if (!violations.length) {
      c.onWrite = undefined;
      await workload.calm();
      await c.ensureRunning();
      await c.clock.advance(CALM_MS);
      // A Node that flapped past its change budget is taken again at its next token, up to one
      // refill period after it stopped (node_change_guard.ts): that is the bound liveness waits for
      // (seed 6369 of workload 1: relabelled seven times, its label still on when judged at 12 minutes).
      if (heldByChangeGuard(c)) {
        c.reached("node changes held");
        await c.clock.advance(NODE_CHANGE_REFILL_MS);
      }
      for (const v of safety.check()) violations.push({ ...v, step: steps });
      for (const v of liveness(c)) violations.push({ ...v, step: -1 });
      const before = c.sim.audit.length;
      await c.clock.advance(10 * 60_000);
      steadyRequests = c.sim.audit.length - before;
      // While the breaker holds Nodes, one held Node's server is read each monitor pass (5 s), to see
      // the cloud come back: 120 reads in ten minutes, by design (design notes: the lifecycle breaker).
      const held = c.gauge("node_lifecycle_deletions_held") > 0 ? 120 : 0;
      if (steadyRequests > STEADY_MAX_REQUESTS + held) {
        const routes = c.sim.audit.slice(before).map((e) => e.route);
        violations.push({
          property: "liveness-steady",
          detail: `${steadyRequests} cloud requests in 10 quiet minutes: ${summarize(routes)}`,
          step: -1,
        });
      }
    }
    for (const s of c.stuck) violations.push({ property: "stop-ends", detail: s, step: trail.length });
    for (const e of c.sim.audit) {
      if (e.status === 429 && /_target$/.test(e.route)) c.reached("429 during a target change");
      if (e.status === 409 && /_route$/.test(e.route)) c.reached("conflict on a route change");
    }
  } catch (err) {
    violations.push({ property: "harness", detail: (err as Error).stack ?? String(err), step: trail.length });
  } finally {
    await c.close().catch(() => {});
  }
  const requests = [
    ...c.sim.audit.map((e) => `${e.time} ${e.method} ${e.path}${e.query} ${e.status}`),
    ...c.apiserver.requests,
    ...trail,
  ];
  return {
    seed,
    trail,
    violations,
    windows: c.windows,
    writes: c.writes.length,
    steadyRequests,
    crashes: c.crashes,
    fingerprint: `${requests.length}:${fnv(requests.join("\n"))}`,
    requests: options.keepRequests ? requests : undefined,
  };
}

/** The windows a crash around a write reaches. */
function noteCrashWindows(c: ExploreCluster, kind: "cloud" | "kube", mode: string): void {
  c.reached(`crash ${mode} of a ${kind} write`);
  const balancers = new Set(
    [...c.sim.world.loadBalancers.values()].map((lb) => lb.labels?.[SERVICE_UID_LABEL]).filter(Boolean),
  );
  const waiting = c.apiserver.objects<Service>("services").some((s) =>
    balancers.has(s.metadata?.uid ?? "") && !s.status?.loadBalancer?.ingress?.length
  );
  if (waiting) c.reached("crash between a balancer create and its status write");
  if (c.apiserver.watchDelayMs > 0) c.reached("crash behind a lagging apiserver");
}

/** FNV-1a, 32 bits, as hex: a short, stable digest of a run's requests. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** `route ×n` for the most frequent routes. */
function summarize(routes: string[]): string {
  const counts = new Map<string, number>();
  for (const r of routes) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([r, n]) => `${r} ×${n}`).join(", ");
}

/** Whether the load-balancer controller held some Node's changes (it said so with a Warning). */
function heldByChangeGuard(c: ExploreCluster): boolean {
  return c.apiserver.objects<Event>("events").some((e) => e.reason === "NodeChangesHeld");
}
