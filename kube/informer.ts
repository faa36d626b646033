/**
 * An informer: lists a resource, keeps a local cache current with a watch, and tells handlers about
 * changes. Defensive by design: bookmarks keep the resume point fresh, 410 Gone relists (and a relist
 * emits the adds, updates and deletes it finds, so nothing is missed), a watchdog restarts silent
 * streams, and failures back off with jitter.
 *
 * @module
 */
import type { KubeClient } from "./client.ts";
import { KubeApiError } from "./errors.ts";
import type { ResourceType } from "./resources.ts";
import { backoffDelay, type BackoffOptions } from "../lib/sleep.ts";
import { type Clock, sleepOn, SYSTEM_CLOCK, type TimerId } from "../lib/clock.ts";
import { logger } from "../lib/log.ts";
import { processRandom } from "../lib/random.ts";

/** Callbacks for cache changes. They run synchronously and should only enqueue work. */
export interface InformerHandlers<T> {
  /** An object appeared (or was listed). */
  onAdd?(object: T): void;
  /** An object changed (or a resync passed it, `previous === current`). */
  onUpdate?(previous: T, current: T): void;
  /** An object went (its last known state). */
  onDelete?(object: T): void;
}

/** Settings of an {@link Informer}. */
export interface InformerOptions {
  /** Only objects in this namespace (default: all). */
  namespace?: string;
  /** Only objects matching this label selector. */
  labelSelector?: string;
  /** Only objects matching this field selector. */
  fieldSelector?: string;
  /** Every this many ms, `onUpdate(obj, obj)` is called for every cached object (0 = never). */
  resyncMs?: number;
  /** Server-side watch timeout; default random in [300, 600) s like client-go. */
  watchTimeoutSeconds?: number;
  /** A watch with no event (bookmarks count) for this long is restarted (default 3 min). */
  watchdogMs?: number;
  /** Delay after failures (default 800 ms doubling to 30 s, up to +100 % jitter). */
  backoff?: BackoffOptions;
  /**
   * Cuts each object down as it arrives (before it is cached), after the generic trimming of
   * managed fields and kubectl's last-applied annotation: what no controller reads need not be held.
   */
  transform?: (object: unknown) => unknown;
  /** What resyncs, the watchdog and failure backoff are timed on (default: the system clock). */
  clock?: Clock;
}

interface Meta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** `namespace/name`, or `name` for cluster-scoped objects: the key of caches and work queues. */
export function objectKey(object: unknown): string {
  const meta = (object as Meta).metadata ?? {};
  return meta.namespace ? `${meta.namespace}/${meta.name}` : `${meta.name}`;
}

/** A cached, watched view of one resource type. */
export class Informer<T> {
  readonly #client: KubeClient;
  readonly #type: ResourceType<T>;
  readonly #options: InformerOptions;
  readonly #handlers: InformerHandlers<T>[] = [];
  readonly #log;
  #cache = new Map<string, T>();
  #resourceVersion = "";
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  /** Number of full lists done (the first plus every relist). */
  listCount = 0;
  readonly #health: ((error: unknown | undefined) => void)[] = [];
  #failing = false;

  /** An informer of `type` through `client`; nothing is read before {@link Informer.run}. */
  constructor(client: KubeClient, type: ResourceType<T>, options: InformerOptions = {}) {
    this.#client = client;
    this.#type = type;
    this.#options = options;
    this.#log = logger("informer", type.plural);
  }

  #trim(object: T): T {
    const trimmed = trim(object);
    return this.#options.transform ? this.#options.transform(trimmed) as T : trimmed;
  }

  /** Adds handlers; objects already cached are replayed to them as adds. */
  addHandlers(handlers: InformerHandlers<T>): void {
    this.#handlers.push(handlers);
    for (const object of this.#cache.values()) this.#call(handlers, "onAdd", object);
  }

  /**
   * Calls `report` with each list or watch failure, and with `undefined` once a list succeeds after
   * failures: a controller names a missing permission in `/readyz` with it, not only in the log.
   */
  onHealth(report: (error: unknown | undefined) => void): void {
    this.#health.push(report);
  }

  /** True once the first list has filled the cache. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves once synced; rejects when `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal!.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#syncWaiters.push(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  /** The cached object with this key (`ns/name` or `name`). */
  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.#cache.values()];
  }

  /** Watches renewed after the watchdog's period without an event (quiet, not failed). */
  watchRenewals = 0;

  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** Lists and watches until `signal` aborts. Never rejects for API failures: it retries them. */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = this.#options.backoff ?? { baseMs: 800, maxMs: 30_000, jitter: 1 };
    let failures = 0;
    let needList = true;
    const clock = this.#options.clock ?? SYSTEM_CLOCK;
    const resync = this.#options.resyncMs
      ? clock.setInterval(() => this.#resync(), this.#options.resyncMs)
      : undefined;
    try {
      while (!signal.aborted) {
        try {
          if (needList) {
            await this.#relist(signal);
            needList = false;
          }
          await this.#watch(signal);
          failures = 0;
        } catch (err) {
          if (signal.aborted) break;
          if (err instanceof KubeApiError && err.isGone) {
            this.#log.info("resourceVersion {rv} expired; relisting", { rv: this.#resourceVersion });
            needList = true;
            continue;
          }
          this.#failing = true;
          for (const report of this.#health) report(err);
          const delay = backoffDelay(failures++, backoff);
          this.#log.warning("{phase} failed, retrying in {delayMs} ms: {error}", {
            phase: needList ? "list" : "watch",
            delayMs: Math.round(delay),
            error: err instanceof Error ? err.message : String(err),
          });
          await sleepOn(clock, delay, signal).catch(() => {});
        }
      }
    } finally {
      if (resync !== undefined) clock.clearInterval(resync);
    }
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const { namespace, labelSelector, fieldSelector } = this.#options;
    // Pages of 100: a kubelet's Node is ~12 kB of JSON, and a page is held untrimmed while parsed.
    const list = await this.#client.listAll(
      this.#type,
      { namespace, labelSelector, fieldSelector, signal, limit: 100 },
      (item) => this.#trim(item),
    );
    this.listCount++;
    if (this.#failing) {
      this.#failing = false;
      for (const report of this.#health) report(undefined);
    }
    const previous = this.#cache;
    const next = new Map<string, T>();
    for (const item of list.items) next.set(objectKey(item), item);
    this.#cache = next;
    this.#resourceVersion = list.metadata.resourceVersion;
    for (const [key, item] of next) {
      const old = previous.get(key);
      if (!old) this.#emit("onAdd", item);
      else if (rv(old) !== rv(item)) this.#emit("onUpdate", old, item);
    }
    for (const [key, old] of previous) if (!next.has(key)) this.#emit("onDelete", old);
    if (!this.#synced) {
      this.#synced = true;
      for (const wake of this.#syncWaiters.splice(0)) wake();
    }
  }

  async #watch(outer: AbortSignal): Promise<void> {
    const { namespace, labelSelector, fieldSelector } = this.#options;
    const watchdogMs = this.#options.watchdogMs ?? 180_000;
    const timeoutSeconds = this.#options.watchTimeoutSeconds ?? Math.floor(300 * (1 + processRandom()));
    const inner = new AbortController();
    const stop = () => inner.abort(outer.reason);
    outer.addEventListener("abort", stop, { once: true });
    let silent = false;
    const clock = this.#options.clock ?? SYSTEM_CLOCK;
    let watchdog: TimerId | undefined;
    const arm = () => {
      if (watchdog !== undefined) clock.clearTimeout(watchdog);
      watchdog = clock.setTimeout(() => {
        silent = true;
        inner.abort(new Error("watch stream silent"));
      }, watchdogMs);
    };
    arm();
    try {
      const events = this.#client.watch(this.#type, {
        namespace,
        labelSelector,
        fieldSelector,
        resourceVersion: this.#resourceVersion,
        timeoutSeconds,
        signal: inner.signal,
      });
      for await (const event of events) {
        arm();
        if (event.type === "ERROR") {
          const s = event.object;
          throw new KubeApiError(
            `WATCH ${this.#type.plural}`,
            s.code ?? 500,
            s.reason ?? "Unknown",
            s.message ?? "",
          );
        }
        const object = this.#trim(event.object as T);
        const version = rv(object);
        if (event.type !== "BOOKMARK") this.#apply(event.type, object);
        if (version) this.#resourceVersion = version;
      }
      if (silent && !outer.aborted) this.#renewing(watchdogMs);
    } catch (err) {
      // A stream without a single event or bookmark for the watchdog's period is renewed from the
      // same resourceVersion. Routine in a quiet cluster (the apiserver sends bookmarks only while
      // its resourceVersion moves), so neither a failure nor a warning: a stream that is really
      // broken fails on the renewal, and that is reported.
      if (silent && !outer.aborted) return this.#renewing(watchdogMs);
      throw err;
    } finally {
      if (watchdog !== undefined) clock.clearTimeout(watchdog);
      outer.removeEventListener("abort", stop);
    }
  }

  /** A watch ended by the watchdog: counted and logged at debug level only. */
  #renewing(watchdogMs: number): void {
    this.watchRenewals++;
    this.#log.debug("no event for {ms} ms; renewing the watch from resourceVersion {rv}", {
      ms: watchdogMs,
      rv: this.#resourceVersion,
    });
  }

  #apply(type: "ADDED" | "MODIFIED" | "DELETED", object: T): void {
    const key = objectKey(object);
    const old = this.#cache.get(key);
    if (type === "DELETED") {
      this.#cache.delete(key);
      this.#emit("onDelete", old ?? object);
      return;
    }
    this.#cache.set(key, object);
    if (old) this.#emit("onUpdate", old, object);
    else this.#emit("onAdd", object);
  }

  #resync(): void {
    if (!this.#synced) return;
    for (const object of this.#cache.values()) this.#emit("onUpdate", object, object);
  }

  #emit(kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    for (const handlers of this.#handlers) this.#call(handlers, kind, a, b);
  }

  #call(handlers: InformerHandlers<T>, kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    try {
      if (kind === "onUpdate") handlers.onUpdate?.(a, b as T);
      else handlers[kind]?.(a);
    } catch (err) {
      this.#log.error("{kind} handler failed: {error}", { kind, error: (err as Error).message });
    }
  }
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Keeps in the cache only what controllers may read: drops `metadata.managedFields` and kubectl's
 * last-applied-configuration annotation (a full copy of the object). Writes are patches, so a
 * trimmed object is never sent back.
 */
function trim<T>(object: T): T {
  const o = object as {
    metadata?: { managedFields?: unknown; annotations?: Record<string, string> };
  };
  if (o.metadata?.managedFields) delete o.metadata.managedFields;
  const annotations = o.metadata?.annotations;
  if (annotations?.[LAST_APPLIED]) delete annotations[LAST_APPLIED];
  return object;
}

function rv(object: unknown): string | undefined {
  return (object as Meta).metadata?.resourceVersion;
}
