/**
 * The server cache: one snapshot serves every lookup by ID, name and IP within a max age.
 * Concurrent refreshes share one. A caller that must not act on data older than some moment
 * (e.g. a Node's creation) passes `notBefore`, which forces at most one refresh for it.
 *
 * A refresh is a full paginated list, or (refresh mode `actions`, the default of the provider) an
 * incremental one: the server and Primary IP action logs since the last one, and a direct read of
 * only the servers they name. A full list still runs every `fullListPeriodMs` (labels and renames
 * are not actions), when a caller demands one (`full`), and whenever the logs cannot be followed.
 *
 * What the logs name is told to `onLogged` listeners (a firewall's keeper learns of rule changes
 * made outside the CCM this way, at no cost), or that some of it was lost (a gap in the logs). How
 * the logs are followed is `log_follower.ts`; when to follow them and when to list is decided here.
 *
 * @module
 */
import { type Clock, SYSTEM_CLOCK } from "../../../lib/clock.ts";
import { type HcloudClient, type ServerInfo, toServerInfo } from "../../../hcloud_api/mod.ts";
import type { Registry } from "../../../lib/metrics.ts";
import { logger } from "../../../lib/log.ts";
import { ActionLogGapError } from "./action_log.ts";
import { CloudApiError } from "../../../hcloud_api/mod.ts";
import { buildSnapshot, pagesOf, type ServerSnapshot, withChanges } from "./snapshot.ts";
import {
  cursorsBeforeList,
  followLogs,
  inBatches,
  type LogCursors,
  type LoggedNews,
} from "./log_follower.ts";

export type { ServerSnapshot } from "./snapshot.ts";
export { ipv6HostOne } from "./snapshot.ts";
export type { LoggedNews } from "./log_follower.ts";

/** Freshness demands of one lookup. */
export interface Freshness {
  /** Accept a snapshot at most this old (default: the cache's max age). */
  maxAgeMs?: number;
  /** Require a snapshot that started after this moment (ms since epoch). */
  notBefore?: number;
  /** Require a full list (not an incremental refresh), e.g. to find a renamed server. */
  full?: boolean;
}

/** How refreshes read the cloud. */
export type RefreshMode = "actions" | "list";

/** Settings of {@link ServerCache}. */
export interface ServerCacheOptions {
  maxAgeMs?: number;
  /** Default `list` (every refresh a full list). */
  refresh?: RefreshMode;
  /** In mode `actions`: the longest time between full lists (default 1 hour). */
  fullListPeriodMs?: number;
  metrics?: Registry;
  /** What ages and the batch window are timed on (default: the system clock). */
  clock?: Clock;
}

const PAGE = 50;
/** Direct reads asked for within this window are decided together (one monitor pass, say). */
const BATCH_WINDOW_MS = 50;

/** See the module doc. */
export class ServerCache {
  readonly #client: HcloudClient;
  readonly #clock: Clock;
  /** How old a snapshot may be before a lookup refreshes it. */
  readonly maxAgeMs: number;
  /** How a refresh reads: the action logs, or a full list. */
  readonly refreshMode: RefreshMode;
  readonly #fullListPeriodMs: number;
  readonly #log = logger("hcloud", "servers");
  #snapshot?: ServerSnapshot;
  #inflight?: Promise<ServerSnapshot>;
  /** The full list being read, if one is (a direct lookup waits for it rather than read on its own). */
  #listing?: Promise<ServerSnapshot>;
  /** Action log cursors, valid for the current snapshot (undefined: the next refresh lists). */
  #cursors?: LogCursors;
  #lastFull = 0;
  readonly #refreshes;
  readonly #fallbacks;
  readonly #lists;
  readonly #listeners: ((snapshot: ServerSnapshot) => void)[] = [];
  readonly #logListeners: ((news: LoggedNews) => void)[] = [];
  readonly #direct = new Map<number, { at: number; read: Promise<ServerInfo | undefined> }>();

  /** A cache reading through `client`. */
  constructor(client: HcloudClient, options: ServerCacheOptions = {}) {
    this.#client = client;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.maxAgeMs = options.maxAgeMs ?? 10_000;
    this.refreshMode = options.refresh ?? "list";
    this.#fullListPeriodMs = options.fullListPeriodMs ?? 3_600_000;
    this.#lists = options.metrics?.counter(
      "hcloud_server_cache_lists_total",
      "Full server lists made by the server cache.",
    );
    this.#refreshes = options.metrics?.counter(
      "hcloud_server_cache_refreshes_total",
      "Server cache refreshes by kind: full (list of every server) or incremental (action logs).",
    );
    this.#fallbacks = options.metrics?.counter(
      "hcloud_server_cache_action_log_fallbacks_total",
      "Incremental refreshes that fell back to a full list, by reason (gap, too_many, error).",
    );
  }

  /** The time on the cache's clock (ms since epoch): what `notBefore` and snapshots' `at` compare with. */
  now(): number {
    return this.#clock.now();
  }

  /** The current snapshot, however old (never a cloud call). */
  peek(): ServerSnapshot | undefined {
    return this.#snapshot;
  }

  /** A snapshot meeting `freshness`, refreshing only when the current one does not. */
  async get(freshness: Freshness = {}): Promise<ServerSnapshot> {
    const maxAge = freshness.maxAgeMs ?? this.maxAgeMs;
    const notBefore = freshness.notBefore ?? 0;
    const meets = (s: ServerSnapshot) => s.at >= notBefore && (!freshness.full || s.full);
    const s = this.#snapshot;
    if (s && this.#clock.now() - s.at < maxAge && meets(s)) return s;
    const inflight = this.#inflight;
    if (inflight) {
      const next = await inflight.catch(() => undefined);
      if (next && meets(next)) return next;
    }
    return await this.#refresh(freshness.full ?? false);
  }

  /**
   * The server as it is now (read directly, at most once per max age), for decisions a stale
   * snapshot must not make: a powered-off server records no action when shut down from inside.
   * Lookups asked for within 50 ms share one full list once they outnumber its pages, so this
   * never costs more than listing at every lookup.
   */
  server(id: number): Promise<ServerInfo | undefined> {
    return this.serverRead(id).then((r) => r.info);
  }

  /** As {@link server}, with when the answer was read (ms since epoch): a list's time, or the read's. */
  async serverRead(id: number): Promise<{ info: ServerInfo | undefined; at: number }> {
    // A snapshot whose full list is within the max age answers, whether or not the logs were
    // followed since: following them adds news and loses none (a joining Node's refresh replaces
    // the full snapshot with an incremental one no staler than it; answering only from a full one
    // made later lookups read single servers).
    const s = this.#snapshot;
    if (s && this.#clock.now() - s.listedAt < this.maxAgeMs) return { info: s.byId.get(id), at: s.listedAt };
    // A full list being read answers too: waiting for it costs nothing, reading each server a request
    // apiece (CI: a starting CCM's first monitor pass read its 7 NotReady Nodes' servers one by one
    // while its first list was under way). The answer carries the list's time, so a server missing
    // from it is still read again before a Node is deleted on it.
    const listing = this.#listing;
    if (listing) {
      const next = await listing.catch(() => undefined);
      if (next) return { info: next.byId.get(id), at: next.listedAt };
    }
    const known = this.#direct.get(id);
    if (known && this.#clock.now() - known.at < this.maxAgeMs) {
      return { info: await known.read, at: known.at };
    }
    const at = this.#clock.now();
    const read = this.#readDirect(id);
    this.#direct.set(id, { at, read });
    read.catch(() => this.#direct.delete(id));
    return { info: await read, at };
  }

  /**
   * One server read now, bypassing every cache (`GET /servers/{id}`; undefined only on 404): what a
   * decision to delete a Node must rest on, since a snapshot or an earlier read may predate an API
   * incident's end.
   */
  async fresh(id: number): Promise<ServerInfo | undefined> {
    const read = this.#fetch(id);
    this.#direct.set(id, { at: this.#clock.now(), read });
    read.catch(() => this.#direct.delete(id));
    return await read;
  }

  /** Calls `listener` with every new snapshot of a full list. */
  onSnapshot(listener: (snapshot: ServerSnapshot) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Calls `listener` with what each read of the action logs finds (only projects read the logs
   * whose servers span more than two pages; smaller ones are listed and report nothing).
   */
  onLogged(listener: (news: LoggedNews) => void): void {
    this.#logListeners.push(listener);
  }

  #tell(news: LoggedNews): void {
    if ("resources" in news && news.resources.length === 0) return;
    for (const listener of this.#logListeners) listener(news);
  }

  /** Forgets everything read so the next lookup lists again. */
  invalidate(): void {
    this.#snapshot = undefined;
    this.#cursors = undefined;
    this.#direct.clear();
  }

  #refresh(full: boolean): Promise<ServerSnapshot> {
    const run = (async () => {
      // Reading the two logs costs two requests at least: a full list of two pages or fewer is as
      // cheap and complete, so small projects simply list.
      const incremental = !full && this.refreshMode === "actions" && this.#snapshot && this.#cursors &&
        pagesOf(this.#snapshot.all.length) > 2 && this.#clock.now() - this.#lastFull < this.#fullListPeriodMs;
      if (incremental) {
        try {
          const next = await this.#incremental(this.#snapshot!, this.#cursors!);
          if (next) return next;
        } catch (err) {
          const reason = err instanceof ActionLogGapError ? err.reason : "error";
          this.#fallbacks?.inc({ reason });
          this.#log.info("action logs cannot be followed ({reason}: {error}); listing every server", {
            reason,
            error: (err as Error).message,
          });
        }
      }
      return await this.#full();
    })();
    this.#inflight = run;
    run.finally(() => {
      if (this.#inflight === run) this.#inflight = undefined;
    }).catch(() => {});
    return run;
  }

  #full(): Promise<ServerSnapshot> {
    const listing = this.#list();
    this.#listing = listing;
    listing.finally(() => {
      if (this.#listing === listing) this.#listing = undefined;
    }).catch(() => {});
    return listing;
  }

  async #list(): Promise<ServerSnapshot> {
    const started = this.#clock.now();
    // The cursors are read first: whatever happens during the list is read again next time. A small
    // project (see #refresh) is listed every time and needs none.
    const small = this.#snapshot !== undefined && pagesOf(this.#snapshot.all.length) <= 2;
    const cursors = this.refreshMode === "actions" && !small
      ? await cursorsBeforeList(this.#client, this.#cursors).then(({ cursors, news }) => {
        if (news) this.#tell(news);
        return cursors;
      }, () => {
        // The logs cannot be read: whatever they held since the old cursors is lost.
        if (this.#cursors) this.#tell({ gap: true });
        return undefined;
      })
      : undefined;
    this.#lists?.inc();
    this.#refreshes?.inc({ kind: "full" });
    const all = await this.#client.listAll<unknown, ServerInfo>(
      "list servers",
      "servers",
      (page) => this.#client.api.GET("/servers", { params: { query: { page, per_page: PAGE } } }),
      toServerInfo,
    );
    const snapshot = buildSnapshot(all, started, true);
    this.#snapshot = snapshot;
    this.#cursors = cursors;
    this.#lastFull = started;
    this.#direct.clear();
    for (const listener of this.#listeners) listener(snapshot);
    return snapshot;
  }

  /** The snapshot updated from the action logs, or undefined when a full list is cheaper. */
  async #incremental(base: ServerSnapshot, cursors: LogCursors): Promise<ServerSnapshot | undefined> {
    const started = this.#clock.now();
    const { news, changes } = await followLogs(this.#client, base, cursors, (id) => this.#fetch(id));
    this.#tell(news);
    if (!changes) return undefined;
    this.#refreshes?.inc({ kind: "incremental" });
    const snapshot = withChanges(base, changes.changed, started);
    this.#snapshot = snapshot;
    this.#cursors = changes.cursors;
    for (const id of changes.changed.keys()) this.#direct.delete(id);
    return snapshot;
  }

  /** One server by ID, undefined when it is gone (404). */
  async #fetch(id: number): Promise<ServerInfo | undefined> {
    try {
      const data = await this.#client.call(
        "get server",
        this.#client.api.GET("/servers/{id}", { params: { path: { id } } }),
      );
      return toServerInfo(data.server);
    } catch (err) {
      if (err instanceof CloudApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Direct reads asked for in one window; a full list serves them when that costs fewer requests. */
  #batch?: { ids: Set<number>; done: Promise<Map<number, ServerInfo | undefined>> };

  #readDirect(id: number): Promise<ServerInfo | undefined> {
    if (!this.#batch) {
      const ids = new Set<number>();
      const done = new Promise<void>((r) => this.#clock.setTimeout(r, BATCH_WINDOW_MS)).then(async () => {
        this.#batch = undefined;
        const found = new Map<number, ServerInfo | undefined>();
        if (ids.size > pagesOf(this.#snapshot?.all.length ?? 0)) {
          const snapshot = await this.get({ notBefore: this.#clock.now(), full: true });
          for (const i of ids) found.set(i, snapshot.byId.get(i));
        } else await inBatches([...ids], async (i) => found.set(i, await this.#fetch(i)));
        return found;
      });
      this.#batch = { ids, done };
    }
    this.#batch.ids.add(id);
    return this.#batch.done.then((found) => found.get(id));
  }
}
