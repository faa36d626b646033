/**
 * The firewall rules this cluster's balancers need: each balancer's public IPv4 may reach the ports
 * it sends to on the Nodes' public interfaces (its services' destination and health-check ports).
 * Balancers that reach their targets through the Network need nothing (a firewall does not filter
 * it). Rules are computed in full and compared, so a change is one write.
 *
 * Compaction, to fit what the firewall leaves (50 entries and 500 effective rules, less the
 * operator's own): one rule per port range with every balancer as a source (100 sources at most
 * per rule), adjacent ports merged, then the closest ranges merged until the count fits. A merged
 * range opens the ports between to the cluster's own balancers only, which send nowhere but to the
 * ports their services name.
 *
 * A co-managed balancer (made outside Kubernetes, `attach-to`) also carries its other owners'
 * services to the Nodes, so it is never a source of those shared rules: its address gets rules of its
 * own, for the ports its Services own only (security review Q5).
 *
 * When not every balancer fits, the rules are still written for those that do, the ones the firewall
 * allows now first, and the rest are named (Q6: one balancer too many froze the firewall, so deleted
 * balancers' addresses, which Hetzner hands to other customers, stayed allowed). Shrinking is always
 * written: a source that is gone is gone from the rules.
 *
 * @module
 */

/** What one balancer needs opened: its public IPv4 and the ports it sends to. */
export interface Opening {
  source: string;
  ports: number[];
  /** Its name, to say which one was left out. */
  name?: string;
  /** A co-managed balancer: rules of its own, never a source of the shared ones (Q5). */
  exclusive?: boolean;
}

/** The rules planned, and the balancers (by name, else address) for which there was no room. */
export interface PlannedRules {
  rules: RuleSpec[];
  leftOut: string[];
}

/** A rule as the API takes it. */
export interface RuleSpec {
  description: string;
  direction: "in";
  protocol: "tcp";
  port: string;
  source_ips: string[];
}

/** Most source CIDRs one rule takes (the API's limit). */
export const SOURCES_PER_RULE = 100;

/** Port ranges covering `ports`, adjacent ones merged: [[lo, hi], ...], ascending. */
export function portRanges(ports: number[]): [number, number][] {
  const sorted = [...new Set(ports)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const p of sorted) {
    const last = out[out.length - 1];
    if (last && p === last[1] + 1) last[1] = p;
    else out.push([p, p]);
  }
  return out;
}

/** Merges the two ranges with the smallest gap between them, until at most `max` remain. */
function mergeClosest(ranges: [number, number][], max: number): [number, number][] {
  const out = ranges.map((r) => [...r] as [number, number]);
  while (out.length > max && out.length > 1) {
    let best = 0;
    for (let i = 1; i < out.length - 1; i++) {
      if (out[i + 1][0] - out[i][1] < out[best + 1][0] - out[best][1]) best = i;
    }
    out.splice(best, 2, [out[best][0], out[best + 1][1]]);
  }
  return out;
}

/**
 * The rules for `openings`, within `room` (entries and effective rules left by the operator's
 * rules), each described as `description` (how the CCM knows its own). `allowed` are the sources
 * (`a.b.c.d/32`) the firewall allows now: when not all fit, they keep their place first.
 */
export function balancerRules(
  openings: Opening[],
  room: { entries: number; effective: number },
  description: string,
  allowed: ReadonlySet<string> = new Set(),
): PlannedRules {
  const wanting = openings.filter((o) => o.ports.length);
  const leftOut: string[] = [];
  const label = (o: Opening) => o.name ?? o.source;
  // Co-managed balancers first: their rules are exact and few.
  const exclusive: RuleSpec[] = [];
  let left = { ...room };
  for (const o of ordered(wanting.filter((o) => o.exclusive), allowed)) {
    const own = portRanges(o.ports).map(([lo, hi]) => rule(description, lo, hi, [`${o.source}/32`]));
    if (own.length <= left.entries && own.length <= left.effective) {
      exclusive.push(...own);
      left = { entries: left.entries - own.length, effective: left.effective - own.length };
    } else leftOut.push(label(o));
  }
  // The shared rules: as many sources as fit with one range covering every port (the least room a
  // source can take), then as many ranges as that room allows.
  const pooled = ordered(wanting.filter((o) => !o.exclusive), allowed);
  const sources = [...new Set(pooled.map((o) => `${o.source}/32`))];
  const fit = Math.max(0, Math.min(sources.length, left.effective, SOURCES_PER_RULE * left.entries));
  const kept = new Set(sources.slice(0, fit));
  for (const o of pooled) if (!kept.has(`${o.source}/32`)) leftOut.push(label(o));
  const shared = sharedRules(pooled.filter((o) => kept.has(`${o.source}/32`)), left, description);
  return { rules: [...exclusive, ...shared], leftOut: [...new Set(leftOut)].sort() };
}

/** `openings` with those whose source the firewall allows now first, each part by address. */
function ordered(openings: Opening[], allowed: ReadonlySet<string>): Opening[] {
  const rank = (o: Opening) => allowed.has(`${o.source}/32`) ? 0 : 1;
  return [...openings].sort((a, b) =>
    rank(a) - rank(b) || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0)
  );
}

function rule(description: string, lo: number, hi: number, sources: string[]): RuleSpec {
  return {
    description,
    direction: "in" as const,
    protocol: "tcp" as const,
    port: lo === hi ? String(lo) : `${lo}-${hi}`,
    source_ips: sources,
  };
}

/** One rule per port range and chunk of sources, every source on every range; `room` fits them all. */
function sharedRules(
  openings: Opening[],
  room: { entries: number; effective: number },
  description: string,
): RuleSpec[] {
  const sources = [...new Set(openings.map((o) => `${o.source}/32`))].sort();
  if (sources.length === 0) return [];
  const chunks: string[][] = [];
  for (let i = 0; i < sources.length; i += SOURCES_PER_RULE) {
    chunks.push(sources.slice(i, i + SOURCES_PER_RULE));
  }
  // Each range costs one entry per chunk of sources, and one effective rule per source.
  const max = Math.min(Math.floor(room.entries / chunks.length), Math.floor(room.effective / sources.length));
  const ranges = mergeClosest(portRanges(openings.flatMap((o) => o.ports)), Math.max(1, max));
  return ranges.flatMap(([lo, hi]) => chunks.map((chunk) => rule(description, lo, hi, chunk)));
}

/** What one Service's NodePorts need: a rule per port range and protocol, from its sources. */
export interface NodePortRuleSpec {
  description: string;
  direction: "in";
  protocol: "tcp" | "udp";
  port: string;
  source_ips: string[];
}

/**
 * The rules opening one Service's NodePorts (`ports`, by protocol) from `sources`. Only adjacent
 * ports merge into a range: a range with a gap would open a port that may be another Service's.
 */
export function nodePortRules(
  ports: { protocol: "tcp" | "udp"; port: number }[],
  sources: string[],
  description: string,
): NodePortRuleSpec[] {
  return (["tcp", "udp"] as const).flatMap((protocol) =>
    portRanges(ports.filter((p) => p.protocol === protocol).map((p) => p.port)).map(([lo, hi]) => ({
      description,
      direction: "in" as const,
      protocol,
      port: lo === hi ? String(lo) : `${lo}-${hi}`,
      source_ips: sources,
    }))
  );
}

/** Effective rules of `rules` as the API counts them (one per rule and source; at least one). */
export function effectiveCount(rules: { source_ips?: string[]; destination_ips?: string[] }[]): number {
  return rules.reduce(
    (n, r) => n + Math.max(1, (r.source_ips ?? []).length + (r.destination_ips ?? []).length),
    0,
  );
}
