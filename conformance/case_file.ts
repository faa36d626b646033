/**
 * The golden case format of `conformance/hccm_golden/` (see its README): what a case sets up, the steps
 * it applies, and the outcome HCCM produced. Loading checks the shape enough to name a broken file.
 *
 * @module
 */

import type { SeedState } from "../hcloud_sim/control.ts";

/** A server as the simulator's seed takes it. */
export interface ServerSeed {
  name: string;
  server_type?: string;
  location?: string;
  ipv4?: string | boolean;
  ipv6?: string | boolean;
  private_net?: { network: string; ip?: string }[];
  labels?: Record<string, string>;
}

/** A load balancer seeded through the public API; targets name servers. */
export interface LoadBalancerSeed {
  name: string;
  load_balancer_type: string;
  location?: string;
  network_zone?: string;
  labels?: Record<string, string>;
  services?: Record<string, unknown>[];
  targets?: { server: string; use_private_ip?: boolean }[];
  protection_delete?: boolean;
}

/** A Service of a case (namespace `default`). */
export interface ServiceSpec {
  name: string;
  namespace?: string;
  type?: string;
  annotations?: Record<string, string>;
  ports: { name?: string; port: number; protocol?: string }[];
  externalTrafficPolicy?: string;
  spec?: Record<string, unknown>;
}

/** A Node as a kubelet registers it. */
export interface NodeSpec {
  name: string;
  podCIDR?: string;
  labels?: Record<string, string>;
  /** Node annotations (an extension of the golden format, used by our own cases). */
  annotations?: Record<string, string>;
  /** `spec.providerID` as a kubelet started with `--provider-id` writes it (our own cases). */
  providerID?: string;
}

/** One later step of a case. */
export interface Step {
  action: string;
  description?: string;
  service?: string | ServiceSpec;
  annotations?: Record<string, string | null>;
  patch?: Record<string, unknown>;
  ports?: ServiceSpec["ports"];
  server?: string | ServerSeed;
  node?: string | NodeSpec;
  index?: number;
  labels?: Record<string, string | null>;
}

/** The compared state of one phase (normalized). */
export interface PhaseState {
  nodes: Record<string, unknown>[];
  services: Record<string, unknown>[];
  load_balancers: Record<string, unknown>[];
  certificates: Record<string, unknown>[];
  routes: Record<string, { destination: string; gateway: string }[]>;
  warning_events: { kind: string; name: string; reason: string }[];
}

/** One recorded phase. */
export interface Phase {
  phase: string;
  description?: string;
  converged: boolean;
  state: PhaseState;
  info: {
    seconds_to_last_change?: number;
    warning_messages?: Record<string, string[]>;
    api?: { requests: number; mutations: number; errors: Record<string, number> };
  };
}

/** A case file. */
export interface Case {
  name: string;
  category?: string;
  description?: string;
  env?: Record<string, string>;
  flags?: string[];
  seed: {
    networks?: SeedState["networks"];
    servers?: ServerSeed[];
    certificates?: {
      name: string;
      type?: string;
      domain_names?: string[];
      labels?: Record<string, string>;
    }[];
    load_balancers?: LoadBalancerSeed[];
    /** Dedicated servers in the simulator's Robot (our cases only: HCCM's recordings have none). */
    robot_servers?: SeedState["robot_servers"];
  };
  nodes: NodeSpec[];
  /**
   * Our own cases: the family of behaviour the case belongs to (the README counts cases per family),
   * and, where HCCM's source leaves the expected outcome open, why (what a recording should settle).
   */
  family?: string;
  uncertain?: string;
  services_before_ccm?: boolean;
  services?: ServiceSpec[];
  steps?: Step[];
  /** HCCM's outcome (golden cases). */
  hccm_outcome?: { phases: Phase[] };
  /** The outcome our documentation promises (our own cases, for behaviour beyond HCCM). */
  expected_outcome?: { phases: Phase[] };
}

/** The outcome a case is compared against, and whose it is. */
export function expectedOf(c: Case): { source: "hccm" | "ours"; phases: Phase[] } {
  if (c.hccm_outcome) return { source: "hccm", phases: c.hccm_outcome.phases };
  if (c.expected_outcome) return { source: "ours", phases: c.expected_outcome.phases };
  throw new Error(`case ${c.name}: neither hccm_outcome nor expected_outcome`);
}

const paths = new WeakMap<Case, string>();

/** The file a loaded case came from. */
export function casePath(c: Case): string | undefined {
  return paths.get(c);
}

/** Reads every `*.json` case in `dir`, sorted by name; `only` keeps the names it lists. */
export async function loadCases(dir: string, only: string[] = []): Promise<Case[]> {
  const cases: Case[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const path = `${dir}/${entry.name}`;
    let c: Case;
    try {
      c = JSON.parse(await Deno.readTextFile(path));
    } catch (err) {
      throw new Error(`${path}: not JSON: ${(err as Error).message}`);
    }
    if (typeof c.name !== "string" || !c.seed || !Array.isArray(c.nodes)) {
      throw new Error(`${path}: not a case (needs name, seed and nodes)`);
    }
    if (!c.hccm_outcome && !c.expected_outcome) c.expected_outcome = { phases: [] };
    paths.set(c, path);
    if (only.length && !only.includes(c.name)) continue;
    cases.push(c);
  }
  return cases.sort((a, b) => a.name.localeCompare(b.name));
}

/** Replaces `${cert:NAME}` and `${uid:SERVICE}` in a string (or every string of a JSON value). */
export function substitute<T>(value: T, certs: Map<string, number>, uids: Map<string, string>): T {
  const one = (s: string) =>
    s.replace(/\$\{(cert|uid):([^}]+)\}/g, (whole, kind: string, name: string) => {
      const found = kind === "cert" ? certs.get(name) : uids.get(name);
      if (found === undefined) {
        throw new Error(`${whole}: no such ${kind === "cert" ? "certificate" : "Service"}`);
      }
      return String(found);
    });
  return mapStrings(value, one);
}

/** A copy of a JSON value with every string (not key) passed through `fn`. */
export function mapStrings<T>(value: T, fn: (s: string) => string): T {
  const walk = (v: unknown): unknown =>
    typeof v === "string"
      ? fn(v)
      : Array.isArray(v)
      ? v.map(walk)
      : v && typeof v === "object"
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
      : v;
  return walk(value) as T;
}
