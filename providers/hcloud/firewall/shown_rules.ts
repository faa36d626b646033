/**
 * The firewall and balancers as the API shows them, as far as the firewall keeper reads them: the
 * rules it compares and writes back, and what a balancer needs opened.
 *
 * @module
 */
import type { Opening } from "./rules.ts";

/** A rule as the API shows it. */
export interface ShownRule {
  description?: string | null;
  direction: string;
  protocol: string;
  port?: string | null;
  source_ips?: string[];
  destination_ips?: string[];
}

/** A firewall as the API shows it. */
export interface ShownFirewall {
  id: number;
  name: string;
  labels?: Record<string, string>;
  rules: ShownRule[];
  applied_to?: unknown[];
}

/** The fields of a listed balancer the rules need. */
/** What the keeper reads of a listed balancer. */
export interface ListedBalancer {
  name?: string;
  public_net?: { enabled?: boolean; ipv4?: { ip?: string | null } | null };
  services?: { listen_port?: number; destination_port?: number; health_check?: { port?: number } }[];
  targets?: { type?: string; use_private_ip?: boolean }[];
}

/**
 * What a balancer needs opened: its public IPv4 to the ports it sends to (of the services whose
 * listen port `only` names, when given); nothing when it has no public IPv4 or reaches every target
 * through the Network (IP targets, Robot's, always go public).
 */
/** What `lb` needs opened (with `only`: the ports of those listen ports); undefined when nothing. */
export function openingOf(lb: ListedBalancer, only?: readonly number[]): Opening | undefined {
  const ip = lb.public_net?.enabled ? lb.public_net.ipv4?.ip : undefined;
  const publicTargets = (lb.targets ?? []).some((t) => t.type === "ip" || !t.use_private_ip);
  if (!ip || !publicTargets) return undefined;
  const ports = (lb.services ?? []).filter((s) => !only || only.includes(s.listen_port ?? -1))
    .flatMap((s) => [s.destination_port, s.health_check?.port])
    .filter((p): p is number => typeof p === "number");
  return { source: ip, ports, ...(lb.name ? { name: lb.name } : {}) };
}

/** Firewall rule entries and effective rules one firewall holds (the API's limits). */
/** The rule as a request takes it: what the API showed, without the empty fields. */
export function requestRule(r: ShownRule): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(r).filter(([, v]) =>
      v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)
    ),
  );
}

/** Whether `shown` and `desired` hold the same rules, in any order. */
export function sameRules(shown: ShownRule[], desired: ShownRule[]): boolean {
  const key = (r: ShownRule) =>
    `${r.description ?? ""}|${r.direction}|${r.protocol}|${r.port ?? ""}|${
      [...(r.source_ips ?? [])].sort().join(",")
    }`;
  const a = shown.map(key).sort();
  const b = desired.map(key).sort();
  return a.length === b.length && a.every((k, i) => k === b[i]);
}
