/**
 * Cloud Firewalls as the API documents them: rules (in/out, tcp/udp ports or ranges, icmp/esp/gre,
 * CIDRs), applied to servers directly or through label selectors, at most 5 per server, 50 rule
 * entries and 500 effective rules per firewall. What a firewall lets through, for the data path:
 * a server with no firewall takes everything; once any applies, inbound traffic is denied unless a
 * rule of one of its firewalls allows it (the docs: "all incoming traffic is blocked"); outbound is
 * not modelled. Only the public interface is filtered (traffic in a Network is not).
 *
 * The model, where the documentation leaves it open: an effective rule is one (rule, CIDR) pair, so
 * a rule's count is its number of source or destination CIDRs (at least 1); the 6th firewall on a
 * server answers `403 resource_limit_exceeded`, as the simulator's other limits do.
 *
 * @module
 */
import { cidrContains, parseCidr } from "../lib/cidr.ts";
import { parseLabelSelector } from "../lib/label_selector.ts";
import type { Server, SimpleResource, World } from "./world.ts";

/** Firewalls one server may have, entries and effective rules one firewall may hold. */
export const FIREWALL_LIMITS = { perServer: 5, entries: 50, effectiveRules: 500 };

/** One rule as the API shows it. */
export interface FirewallRule {
  description: string | null;
  direction: "in" | "out";
  protocol: "tcp" | "udp" | "icmp" | "esp" | "gre";
  port: string | null;
  source_ips: string[];
  destination_ips: string[];
}

/** What a firewall is applied to, as stored (a label selector is resolved when shown). */
export type FirewallTarget =
  | { type: "server"; server: { id: number } }
  | { type: "label_selector"; label_selector: { selector: string } };

/** A firewall of the world (a SimpleResource with these fields). */
export type Firewall = SimpleResource & { rules: FirewallRule[]; applied_to: FirewallTarget[] };

/** The effective rules of a rule list (see the module doc). */
export function effectiveRules(rules: FirewallRule[]): number {
  return rules.reduce((n, r) => n + Math.max(1, r.source_ips.length + r.destination_ips.length), 0);
}

/** Whether a server has a public interface (firewalls apply to it only). */
export function hasPublicInterface(server: Server): boolean {
  return !!(server.public_net.ipv4 || server.public_net.ipv6);
}

/** The servers a firewall applies to now, with how (directly or by a label selector). */
export function appliedServers(world: World, fw: Firewall): Map<number, "server" | "label_selector"> {
  const out = new Map<number, "server" | "label_selector">();
  for (const t of fw.applied_to) {
    if (t.type === "server") {
      if (world.servers.has(t.server.id)) out.set(t.server.id, "server");
      continue;
    }
    const selector = parseLabelSelector(t.label_selector.selector);
    for (const s of world.servers.values()) {
      if (selector.matches(s.labels) && hasPublicInterface(s) && !out.has(s.id)) {
        out.set(s.id, "label_selector");
      }
    }
  }
  return out;
}

/** The firewalls that apply to a server, lowest ID first. */
export function firewallsOf(world: World, serverId: number): Firewall[] {
  return ([...world.firewalls.values()] as Firewall[])
    .filter((fw) => appliedServers(world, fw).has(serverId))
    .sort((a, b) => a.id - b.id);
}

/** The firewall as the API shows it: label selectors with the servers they resolve to. */
export function renderFirewall(world: World, fw: Firewall): Firewall {
  const applied = appliedServers(world, fw);
  return {
    ...structuredClone(fw),
    applied_to: fw.applied_to.filter((t) => t.type !== "server" || world.servers.has(t.server.id)).map((t) =>
      t.type === "server" ? t : {
        ...t,
        applied_to_resources: [...applied].filter(([, how]) => how === "label_selector")
          .filter(([id]) =>
            parseLabelSelector(t.label_selector.selector).matches(world.servers.get(id)!.labels)
          )
          .map(([id]) => ({ type: "server", server: { id } })),
      }
    ),
  };
}

/** Whether a TCP or UDP port is in a rule's `port` ("80", "30000-32767"). */
function portMatches(rulePort: string | null, port: number): boolean {
  if (rulePort === null || rulePort === "any") return true;
  const [lo, hi] = rulePort.split("-").map(Number);
  return port >= lo && port <= (hi ?? lo);
}

/**
 * Whether inbound `protocol` traffic from `source` to `port` of the server's public interface is let
 * through: yes without any firewall, else only if a rule of one of its firewalls allows it.
 */
export function allowsInbound(
  world: World,
  serverId: number,
  packet: { protocol: "tcp" | "udp"; source: string; port: number },
): boolean {
  const firewalls = firewallsOf(world, serverId);
  if (firewalls.length === 0) return true;
  return firewalls.some((fw) =>
    fw.rules.some((r) =>
      r.direction === "in" && r.protocol === packet.protocol && portMatches(r.port, packet.port) &&
      r.source_ips.some((c) => {
        const cidr = parseCidr(c);
        return !!cidr && cidrContains(cidr, packet.source);
      })
    )
  );
}
