/**
 * Immutable server snapshots and their indexes (ID, name, IP), built from a full list or from
 * an older snapshot and the servers re-read since.
 *
 * @module
 */
import type { ServerInfo } from "../../../hcloud_api/mod.ts";

/** An immutable view of every server at one moment. */
export interface ServerSnapshot {
  /** When the refresh started (ms since epoch). */
  at: number;
  /** True when it comes from a full list (false: an incremental refresh of an older one). */
  full: boolean;
  /**
   * When the full list it rests on started (`at` for a full list). What no action records (a shutdown
   * from inside, a server gone without an action) is at most this old in it: an incremental refresh
   * adds what the logs name and takes nothing away.
   */
  listedAt: number;
  /** Servers by ID. */
  byId: Map<number, ServerInfo>;
  /** Servers by name. */
  byName: Map<string, ServerInfo>;
  /** Public IPv4, `::1` of the IPv6 network, and private IPs → servers having them. */
  byIp: Map<string, ServerInfo[]>;
  /** Every server, in the list's order. */
  all: ServerInfo[];
}

/** The snapshot of `all`, indexed. */
export function buildSnapshot(
  all: ServerInfo[],
  at: number,
  full: boolean,
  listedAt = at,
): ServerSnapshot {
  const snapshot: ServerSnapshot = {
    at,
    full,
    listedAt,
    all,
    byId: new Map(),
    byName: new Map(),
    byIp: new Map(),
  };
  const addIp = (ip: string, s: ServerInfo) => {
    const list = snapshot.byIp.get(ip);
    if (list) list.push(s);
    else snapshot.byIp.set(ip, [s]);
  };
  for (const s of all) {
    snapshot.byId.set(s.id, s);
    snapshot.byName.set(s.name, s);
    if (s.ipv4) addIp(s.ipv4, s);
    if (s.ipv6Net) addIp(ipv6HostOne(s.ipv6Net), s);
    for (const p of s.privateNets) addIp(p.ip, s);
  }
  return snapshot;
}

/** `base` with the servers re-read since (undefined: gone), as of `at`. */
export function withChanges(
  base: ServerSnapshot,
  changed: Map<number, ServerInfo | undefined>,
  at: number,
): ServerSnapshot {
  if (changed.size === 0) return { ...base, at, full: false };
  const all = base.all.filter((s) => !changed.has(s.id));
  for (const server of changed.values()) if (server) all.push(server);
  return buildSnapshot(all, at, false, base.listedAt);
}

/** Requests a full list of `servers` servers takes. */
export function pagesOf(servers: number): number {
  return Math.max(1, Math.ceil(servers / 50));
}

/** `2001:db8::/64` → `2001:db8::1`: the address the official CCM reports for a server's IPv6. */
export function ipv6HostOne(network: string): string {
  const base = network.split("/")[0];
  return base.endsWith("::") ? `${base}1` : base.replace(/:0*$/, ":1");
}
