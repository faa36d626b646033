/**
 * Compares a run's phases with the expected ones field by field, as the golden README says:
 * arrays of named objects matched by name, load balancer services by listen port, targets by the
 * servers they resolve to, and timing-only warning events optional on both sides.
 *
 * @module
 */
import type { Phase, PhaseState } from "./case_file.ts";

/** One field that differs. */
export interface Difference {
  phase: string;
  /** E.g. `load_balancers[<default-name:svc>].services[80].health_check.protocol`. */
  path: string;
  expected: unknown;
  actual: unknown;
}

/**
 * Warning events that come from timing, not configuration (README "Comparing"), plus one the fresh
 * kube-apiserver itself sometimes records about `default/kubernetes` while it starts (no CCM
 * involved).
 */
const TIMING_WARNINGS: { kind: string; reason: RegExp; message: RegExp }[] = [
  { kind: "Service", reason: /^ClusterIPNotAllocated$/, message: /./ },
  // The route controller acted before the Node had its InternalIP (HCCM's and our wording).
  {
    kind: "Node",
    reason: /^FailedToCreateRoute$/,
    message: /not part of routes target addresses|has no InternalIP/i,
  },
  { kind: "Node", reason: /^UnknownProviderIDPrefix$/, message: /./ },
  {
    kind: "Service",
    reason: /^(UpdateLoadBalancerFailed|SyncLoadBalancerFailed)$/,
    message: /unknown provider ?id|locked/i,
  },
];

/** Compares phase lists; the result is empty when they are the same. */
export function comparePhases(
  expected: Phase[],
  actual: {
    phase: string;
    converged: boolean;
    state: PhaseState;
    warningMessages: Record<string, string[]>;
  }[],
): Difference[] {
  const out: Difference[] = [];
  const n = Math.max(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    const e = expected[i];
    const a = actual[i];
    const phase = e?.phase ?? a!.phase;
    if (!e || !a || e.phase !== a.phase) {
      out.push({ phase, path: "phase", expected: e?.phase ?? null, actual: a?.phase ?? null });
      continue;
    }
    if (e.converged !== a.converged) {
      out.push({ phase, path: "converged", expected: e.converged, actual: a.converged });
    }
    const push = (path: string, x: unknown, y: unknown) => out.push({ phase, path, expected: x, actual: y });
    compareNamed("nodes", e.state.nodes, a.state.nodes, push);
    compareNamed("services", e.state.services, a.state.services, push);
    compareLoadBalancers(e.state.load_balancers, a.state.load_balancers, push);
    compareNamed("certificates", e.state.certificates, a.state.certificates, push);
    diff("routes", e.state.routes, a.state.routes, push, 6);
    compareWarnings(e, a, push);
  }
  return out;
}

type Push = (path: string, expected: unknown, actual: unknown) => void;

function compareNamed(
  what: string,
  expected: Record<string, unknown>[],
  actual: Record<string, unknown>[],
  push: Push,
) {
  diff(what, byKey(expected, (o) => String(o.name)), byKey(actual, (o) => String(o.name)), push, 6);
}

function compareLoadBalancers(
  expected: Record<string, unknown>[],
  actual: Record<string, unknown>[],
  push: Push,
) {
  const prepare = (lb: Record<string, unknown>): Record<string, unknown> => {
    const { targets, services, ...rest } = lb;
    return {
      ...rest,
      services: byKey(services as Record<string, unknown>[], (s) => String(s.listen_port)),
      private_ip_by_server: privateIpByServer(
        targets as Record<string, unknown>[],
        lb.target_servers as string[],
      ),
      targets,
    };
  };
  const e = byKey(expected.map(prepare), (o) => String(o.name));
  const a = byKey(actual.map(prepare), (o) => String(o.name));
  for (const name of new Set([...Object.keys(e), ...Object.keys(a)])) {
    const x = e[name] as Record<string, unknown> | undefined;
    const y = a[name] as Record<string, unknown> | undefined;
    if (!x || !y) {
      push(`load_balancers[${name}]`, x ?? null, y ?? null);
      continue;
    }
    const { targets: tx, ...restX } = x;
    const { targets: ty, ...restY } = y;
    diff(`load_balancers[${name}]`, restX, restY, push, 6);
    // The target type may differ (README): only server targets on both sides compare as they are.
    if (allServerTargets(tx) && allServerTargets(ty)) {
      diff(`load_balancers[${name}].targets`, tx, ty, push, 0);
    }
  }
}

function allServerTargets(t: unknown): boolean {
  return Array.isArray(t) && t.every((x) => (x as { type?: string }).type === "server");
}

/** `use_private_ip` per resolved server: a label selector's flag applies to each server it matches. */
function privateIpByServer(targets: Record<string, unknown>[], servers: string[]): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const t of targets ?? []) {
    if (t.type === "server") out[String(t.server)] = Boolean(t.use_private_ip);
  }
  const selector = (targets ?? []).find((t) => t.type === "label_selector");
  if (selector) { for (const s of servers ?? []) out[s] ??= Boolean(selector.use_private_ip); }
  return Object.fromEntries(Object.entries(out).sort(([p], [q]) => p < q ? -1 : 1));
}

function compareWarnings(
  e: Phase,
  a: { state: PhaseState; warningMessages: Record<string, string[]> },
  push: Push,
) {
  const id = (w: { kind: string; name: string; reason: string }) => `${w.kind}/${w.name}/${w.reason}`;
  const timingOnly = (w: { kind: string; reason: string }, messages: string[] | undefined) =>
    TIMING_WARNINGS.some((t) =>
      t.kind === w.kind && t.reason.test(w.reason) && (messages ?? []).length > 0 &&
      messages!.every((m) => t.message.test(m))
    );
  const expected = new Map(e.state.warning_events.map((w) => [id(w), w]));
  const actual = new Map(a.state.warning_events.map((w) => [id(w), w]));
  for (const [key, w] of expected) {
    if (actual.has(key) || timingOnly(w, e.info.warning_messages?.[key])) continue;
    push(`warning_events[${key}]`, true, false);
  }
  for (const [key, w] of actual) {
    if (expected.has(key) || timingOnly(w, a.warningMessages[key])) continue;
    push(`warning_events[${key}]`, false, true);
  }
}

function byKey<T>(items: T[], key: (t: T) => string): Record<string, T> {
  return Object.fromEntries((items ?? []).map((i) => [key(i), i]));
}

/**
 * Pushes the differing leaves below `path`; objects are descended `depth` levels (then compared as
 * JSON), arrays are compared whole.
 */
function diff(path: string, x: unknown, y: unknown, push: Push, depth: number): void {
  if (JSON.stringify(x) === JSON.stringify(y)) return;
  const isObject = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (depth > 0 && isObject(x) && isObject(y)) {
    const a = x as Record<string, unknown>;
    const b = y as Record<string, unknown>;
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const sub = /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `${path}.${k}` : `${path}[${k}]`;
      if (!(k in a) || !(k in b)) push(sub, a[k] ?? null, b[k] ?? null);
      else diff(sub, a[k], b[k], push, depth - 1);
    }
    return;
  }
  push(path, x ?? null, y ?? null);
}
