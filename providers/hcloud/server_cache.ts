/**
 * The server cache: one paginated list serves every lookup by ID, name and IP within a max age.
 * Concurrent refreshes share one list. A caller that must not act on data older than some moment
 * (e.g. a Node's creation) passes `notBefore`, which forces at most one re-list for it.
 *
 * @module
 */
import type { HcloudClient } from "./client.ts";
import { type ServerInfo, toServerInfo } from "./shapes.ts";
import type { Registry } from "../../lib/metrics.ts";

/** An immutable view of every server at one moment. */
export interface ServerSnapshot {
  /** When the list started (ms since epoch). */
  at: number;
  byId: Map<number, ServerInfo>;
  byName: Map<string, ServerInfo>;
  /** Public IPv4, `::1` of the IPv6 network, and private IPs → servers having them. */
  byIp: Map<string, ServerInfo[]>;
  all: ServerInfo[];
}

/** Freshness demands of one lookup. */
export interface Freshness {
  /** Accept a snapshot at most this old (default: the cache's max age). */
  maxAgeMs?: number;
  /** Require a snapshot that started after this moment (ms since epoch). */
  notBefore?: number;
}

/** See the module doc. */
export class ServerCache {
  readonly #client: HcloudClient;
  readonly maxAgeMs: number;
  #snapshot?: ServerSnapshot;
  #inflight?: Promise<ServerSnapshot>;
  readonly #lists;
  readonly #listeners: ((snapshot: ServerSnapshot) => void)[] = [];

  constructor(client: HcloudClient, options: { maxAgeMs?: number; metrics?: Registry } = {}) {
    this.#client = client;
    this.maxAgeMs = options.maxAgeMs ?? 10_000;
    this.#lists = options.metrics?.counter(
      "hcloud_server_cache_lists_total",
      "Full server lists made by the server cache.",
    );
  }

  /** A snapshot meeting `freshness`, listing servers only when the current one does not. */
  async get(freshness: Freshness = {}): Promise<ServerSnapshot> {
    const maxAge = freshness.maxAgeMs ?? this.maxAgeMs;
    const s = this.#snapshot;
    if (s && Date.now() - s.at < maxAge && s.at >= (freshness.notBefore ?? 0)) return s;
    const inflight = this.#inflight;
    if (inflight) {
      const next = await inflight;
      if (next.at >= (freshness.notBefore ?? 0)) return next;
    }
    return await this.#refresh();
  }

  /** Calls `listener` with every new snapshot (after each full list). */
  onSnapshot(listener: (snapshot: ServerSnapshot) => void): void {
    this.#listeners.push(listener);
  }

  /** Forgets the snapshot so the next lookup lists again. */
  invalidate(): void {
    this.#snapshot = undefined;
  }

  #refresh(): Promise<ServerSnapshot> {
    const started = Date.now();
    const run = (async () => {
      this.#lists?.inc();
      const all = await this.#client.listAll<unknown, ServerInfo>(
        "list servers",
        "servers",
        (page) => this.#client.api.GET("/servers", { params: { query: { page, per_page: 50 } } }),
        toServerInfo,
      );
      const snapshot: ServerSnapshot = {
        at: started,
        all,
        byId: new Map(),
        byName: new Map(),
        byIp: new Map(),
      };
      const addIp = (ip: string, s: ServerInfo) =>
        snapshot.byIp.set(ip, [...(snapshot.byIp.get(ip) ?? []), s]);
      for (const s of all) {
        snapshot.byId.set(s.id, s);
        snapshot.byName.set(s.name, s);
        if (s.ipv4) addIp(s.ipv4, s);
        if (s.ipv6Net) addIp(ipv6HostOne(s.ipv6Net), s);
        for (const p of s.privateNets) addIp(p.ip, s);
      }
      this.#snapshot = snapshot;
      for (const listener of this.#listeners) listener(snapshot);
      return snapshot;
    })();
    this.#inflight = run;
    run.finally(() => {
      if (this.#inflight === run) this.#inflight = undefined;
    }).catch(() => {});
    return run;
  }
}

/** `2001:db8::/64` → `2001:db8::1`: the address the official CCM reports for a server's IPv6. */
export function ipv6HostOne(network: string): string {
  const base = network.split("/")[0];
  return base.endsWith("::") ? `${base}1` : base.replace(/:0*$/, ":1");
}
