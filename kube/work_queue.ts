/**
 * A work queue of object keys with client-go semantics: a key is queued at most once, never
 * processed by two workers at once, re-queued when it changed while being processed, and retried
 * with per-key exponential backoff. Workers reconcile keys, not events.
 *
 * @module
 */
import type { Registry } from "../lib/metrics.ts";
import { logger } from "../lib/log.ts";
import { type Clock, type Quiescent, SYSTEM_CLOCK, type TimerId } from "../lib/clock.ts";
import { FairFifo } from "./fair_fifo.ts";
import type { LoopHealth } from "../lib/loop_health.ts";

/** Settings of a {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** First retry delay in ms (default 5 ms, as client-go). */
  baseDelayMs?: number;
  /** Largest retry delay in ms (default 1000 s, as client-go). */
  maxDelayMs?: number;
  metrics?: Registry;
  /** The clock its delays run on (default: the system's; tests: a fake one). */
  clock?: Clock;
  /**
   * The writer a key belongs to (a Service's namespace): waiting keys are handed out in turn between
   * writers, so one writer's burst does not hold back another's first key (security review Q4).
   * Default: one writer, plain first in, first out.
   */
  writerOf?: (key: string) => string;
}

/** A reconcile result asking for another run after a fixed delay (no backoff growth). */
export interface Requeue {
  requeueAfterMs: number;
}

/** Errors carrying `retryAfterMs` are retried after exactly that delay instead of backing off. */
export interface RetryAfter {
  retryAfterMs: number;
}

function hasRetryAfter(err: unknown): err is RetryAfter {
  return typeof (err as RetryAfter)?.retryAfterMs === "number";
}

/**
 * How a failed reconcile is retried: after a fixed delay (a conflict, a busy resource, a server's
 * Retry-After), not at all until the object changes (`"forget"`: input that retrying cannot fix), or,
 * when `undefined`, with the queue's per-key exponential backoff.
 */
export type RetryPolicy = (err: unknown) => { afterMs: number } | "forget" | undefined;

/** The default: only errors carrying `retryAfterMs` get a fixed delay. */
const defaultPolicy: RetryPolicy = (err) => hasRetryAfter(err) ? { afterMs: err.retryAfterMs } : undefined;

/** The queue. Keys are strings such as `namespace/name`. */
export class WorkQueue implements Quiescent {
  readonly name: string;
  readonly #queue: FairFifo;
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #delayed = new Map<string, { at: number; timer: TimerId }>();
  readonly #clock: Clock;
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  #shuttingDown = false;
  #steps = 0;
  readonly #m;

  constructor(name: string, options: WorkQueueOptions = {}) {
    this.name = name;
    this.#baseDelayMs = options.baseDelayMs ?? 5;
    this.#maxDelayMs = options.maxDelayMs ?? 1_000_000;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#clock.watch?.(this);
    this.#queue = new FairFifo(options.writerOf ?? (() => ""));
    const r = options.metrics;
    this.#m = r && {
      depth: r.gauge("workqueue_depth", "Current depth of the work queue."),
      adds: r.counter("workqueue_adds_total", "Keys added to the work queue."),
      retries: r.counter("workqueue_retries_total", "Keys re-queued with backoff."),
      latency: r.histogram(
        "workqueue_queue_duration_seconds",
        "Time a key waits in the queue before processing.",
      ),
      work: r.histogram("workqueue_work_duration_seconds", "Time spent processing a key."),
    };
  }

  /** Queues `key` unless it is already waiting. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#steps++;
    this.#dirty.add(key);
    this.#m?.adds.inc({ name: this.name });
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, performance.now());
    if (this.#processing.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) this.#hand(key, waiter);
    else this.#queue.push(key);
    this.#updateDepth();
  }

  /** Queues `key` after `ms`; an earlier pending delay for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.#clock.now() + ms;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) this.#clock.clearTimeout(pending.timer);
    const timer = this.#clock.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, ms);
    this.#delayed.set(key, { at, timer });
  }

  /**
   * Queues `key` after its next backoff delay (base × 2^failures, capped), or after what `pay` makes
   * of that delay (a writer's budget may push it later).
   */
  addRateLimited(key: string, pay: (key: string, delayMs: number) => number = (_, ms) => ms): void {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    this.#m?.retries.inc({ name: this.name });
    this.addAfter(key, pay(key, this.backoffFor(failures)));
  }

  /** The delay the `failures`-th retry waits. */
  backoffFor(failures: number): number {
    return Math.min(this.#maxDelayMs, this.#baseDelayMs * Math.pow(2, Math.min(failures, 50)));
  }

  /** Clears the failure count of `key` (call after a success). */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /**
   * Queues at once every key waiting out the backoff of a failure (when its likely cause is gone,
   * say new credentials); returns those keys. Keys given up as terminal are not among them.
   */
  retryFailedNow(): string[] {
    const keys = [...this.#failures.keys()].filter((key) => this.#delayed.has(key));
    for (const key of keys) {
      this.#clock.clearTimeout(this.#delayed.get(key)!.timer);
      this.#delayed.delete(key);
      this.add(key);
    }
    return keys;
  }

  /** How many times `key` has been retried since its last success. */
  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Keys added, handed out and finished so far (a test clock's sign of movement). */
  get steps(): number {
    return this.#steps;
  }

  /** Nothing waiting now and nothing in process (delayed keys aside: they wait for their time). */
  get idle(): boolean {
    return this.#queue.length === 0 && this.#processing.size === 0;
  }

  /** Keys waiting now (not delayed, not in process). */
  get length(): number {
    return this.#queue.length;
  }

  /** Waits for the next key; `undefined` once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#updateDepth();
      return Promise.resolve(this.#take(key));
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added meanwhile it is queued again. */
  done(key: string): void {
    this.#steps++;
    this.#processing.delete(key);
    const started = this.#startedAt.get(key);
    this.#startedAt.delete(key);
    if (started !== undefined) {
      this.#m?.work.observe({ name: this.name }, (performance.now() - started) / 1000);
    }
    if (this.#dirty.has(key)) {
      const waiter = this.#waiters.shift();
      if (waiter) this.#hand(key, waiter);
      else this.#queue.push(key);
      this.#updateDepth();
    }
  }

  /** Stops handing out keys; waiting `get()` calls resolve `undefined`. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) this.#clock.clearTimeout(timer);
    this.#delayed.clear();
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }

  #hand(key: string, waiter: (key: string) => void): void {
    waiter(this.#take(key));
  }

  #take(key: string): string {
    this.#steps++;
    this.#dirty.delete(key);
    this.#processing.add(key);
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    if (added !== undefined) {
      this.#m?.latency.observe({ name: this.name }, (performance.now() - added) / 1000);
    }
    this.#startedAt.set(key, performance.now());
    return key;
  }

  #updateDepth(): void {
    this.#m?.depth.set({ name: this.name }, this.#queue.length);
  }
}

/** How {@link runWorkers} runs reconciles and treats their failures. */
export interface WorkerOptions {
  /** Workers taking keys at once (default 1). */
  workers?: number;
  /** How a failure is retried (default: after `retryAfterMs` when the error has one, else backoff). */
  policy?: RetryPolicy;
  /** The work's cancellation (SIGTERM, a lost lease), handed to every reconcile. */
  signal?: AbortSignal;
  /**
   * Called once when the policy gives a key up for an error retrying cannot fix (controller-runtime's
   * terminal-error handling): the place to record the Warning event. The key waits for a change.
   */
  onTerminal?: (key: string, err: unknown) => void;
  /**
   * What a retry of `key` after `delayMs` costs its writer: the delay it may run after (at least
   * `delayMs`). Default: nothing, the delay as it is. The service controller charges retries to the
   * Service's namespace, as it charges its changes (security review Q3).
   */
  payRetry?: (key: string, delayMs: number) => number;
  /**
   * The loop serving the whole cluster that a key runs, if it is one (a firewall sync, drift repair):
   * each run's end is told to `health` (a gauge, and `/readyz` once it keeps failing).
   */
  loop?: { health: LoopHealth; name: (key: string) => string | undefined };
}

/**
 * Runs workers that take keys from `queue` and call `reconcile` with the key and the work's signal
 * (hand it to every cloud call). Success forgets the key's failures (a returned {@link Requeue}
 * schedules it again); a failure is retried as the policy says, except one that ends a cancelled
 * reconcile. Resolves when the queue shuts down (the caller shuts it down when the signal aborts).
 */
export async function runWorkers(
  queue: WorkQueue,
  reconcile: (key: string, signal: AbortSignal) => Promise<Requeue | void>,
  options: WorkerOptions = {},
): Promise<void> {
  const policy = options.policy ?? defaultPolicy;
  const pay = options.payRetry ?? ((_key: string, ms: number) => ms);
  const signal = options.signal ?? new AbortController().signal;
  const log = logger("workqueue", queue.name);
  const worker = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        const result = await reconcile(key, signal);
        queue.forget(key);
        const loop = options.loop?.name(key);
        if (loop) options.loop!.health.ok(loop);
        if (result?.requeueAfterMs) queue.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (signal.aborted) {
          log.debug("{key}: cancelled ({error})", { key, error: message });
          continue;
        }
        const loop = options.loop?.name(key);
        if (loop) options.loop!.health.failed(loop, message);
        const retry = policy(err);
        if (retry === "forget") {
          log.info("{key}: {error}; not retried until it changes", { key, error: message });
          queue.forget(key);
          options.onTerminal?.(key, err);
        } else if (retry) {
          const ms = pay(key, retry.afterMs);
          log.info("{key}: {error}; retrying in {ms} ms", { key, error: message, ms });
          queue.addAfter(key, ms);
        } else {
          log.warning("{key}: {error} (retry {n})", { key, error: message, n: queue.retries(key) + 1 });
          queue.addRateLimited(key, pay);
        }
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.workers ?? 1) }, worker));
}
