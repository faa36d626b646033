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
 * @module
 */

/** What one balancer needs opened: its public IPv4 and the ports it sends to. */
export interface Opening {
  source: string;
  ports: number[];
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

/** Why the rules cannot fit (too many balancers for the room the operator's rules leave). */
export class RulesDoNotFit extends Error {}

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
 * rules), each described as `description` (how the CCM knows its own). Throws RulesDoNotFit.
 */
export function balancerRules(
  openings: Opening[],
  room: { entries: number; effective: number },
  description: string,
): RuleSpec[] {
  const sources = [...new Set(openings.filter((o) => o.ports.length).map((o) => `${o.source}/32`))].sort();
  if (sources.length === 0) return [];
  const chunks: string[][] = [];
  for (let i = 0; i < sources.length; i += SOURCES_PER_RULE) {
    chunks.push(sources.slice(i, i + SOURCES_PER_RULE));
  }
  // Each range costs one entry per chunk of sources, and one effective rule per source.
  const byEntries = Math.floor(room.entries / chunks.length);
  const byEffective = Math.floor(room.effective / sources.length);
  const max = Math.min(byEntries, byEffective);
  if (max < 1) {
    throw new RulesDoNotFit(
      `${sources.length} load balancers need ${chunks.length} rule(s) of ${sources.length} effective rules, ` +
        `but the firewall has room for ${room.entries} rules and ${room.effective} effective rules besides ` +
        "its other rules (a firewall holds 50 rules and 500 effective rules)",
    );
  }
  const ranges = mergeClosest(portRanges(openings.flatMap((o) => o.ports)), max);
  return ranges.flatMap(([lo, hi]) =>
    chunks.map((chunk) => ({
      description,
      direction: "in" as const,
      protocol: "tcp" as const,
      port: lo === hi ? String(lo) : `${lo}-${hi}`,
      source_ips: chunk,
    }))
  );
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
