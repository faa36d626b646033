/**
 * One tenant cannot spend the project's budget by churning its Services (issue 41 item 4): every
 * change a namespace makes to its Services (a create, or an update the controller acts on) costs
 * cloud writes, so the syncs those changes start are admitted from a token bucket per namespace —
 * {@link SERVICE_CHANGE_BURST} at once, then one per {@link SERVICE_CHANGE_REFILL_MS}. A change past
 * that is synced later, not dropped (reconcile is level-based: the delayed sync reads the Service as
 * it is then, so a burst of edits to one Service costs one sync), and the Service gets a Warning once
 * per hold. A failed sync's retry is paid from the same bucket (security review Q3: a Service that
 * fails for free, such as one naming a certificate that does not exist, was retried forever outside
 * it, ~5 000 syncs an hour from 400 of them): it waits its backoff or for its token, whichever is
 * later. Resyncs and Node changes are not counted: the CCM starts those, not the tenant.
 *
 * Worst case per namespace, first tries and retries together: 100 syncs in a burst, then 360 an hour,
 * each a few requests at most. Buckets that have refilled are dropped once more than
 * {@link MAX_BUCKETS} namespaces were seen (Q13): a full bucket is what a new namespace gets anyway, so
 * what stays is the namespaces that spent within the last refill of a whole burst (1000 s).
 *
 * @module
 */
import { refilled } from "../../lib/token_bucket.ts";

/** Service syncs a namespace may start at once. */
export const SERVICE_CHANGE_BURST = 100;
/** After the burst, one more per this long. */
export const SERVICE_CHANGE_REFILL_MS = 10_000;
/** Namespaces kept before full buckets are dropped. */
export const MAX_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
  warnedAt: number;
}

/** When a change's sync may run: now (0), after `delayMs`, and whether to say the namespace is held. */
export interface Admission {
  delayMs: number;
  /** The first hold of this namespace within a refill of the whole burst: worth a Warning. */
  warn: boolean;
}

/** See the module doc. */
export class ChangeBudget {
  readonly #buckets = new Map<string, Bucket>();
  /** The size at which full buckets are next looked for (twice what was left, so pruning stays cheap). */
  #pruneAt = MAX_BUCKETS;
  /** Keys whose sync is already scheduled for later, and when it is due. */
  readonly #pending = new Map<string, number>();

  constructor(
    readonly capacity = SERVICE_CHANGE_BURST,
    readonly refillMs = SERVICE_CHANGE_REFILL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Admits a change of `key` by `writer` (its namespace); undefined when a sync of `key` is already
   * scheduled (it will read the latest state, so this change costs nothing more).
   */
  admit(writer: string, key: string): Admission | undefined {
    const now = this.now();
    const due = this.#pending.get(key);
    if (due !== undefined && due > now) return undefined;
    this.#pending.delete(key);
    if (this.#pending.size > 10_000) {
      for (const [k, at] of this.#pending) if (at <= now) this.#pending.delete(k);
    }
    const bucket = this.#take(writer, now);
    if (bucket.tokens >= 0) return { delayMs: 0, warn: false };
    const delayMs = Math.ceil(-bucket.tokens * this.refillMs);
    this.#pending.set(key, now + delayMs);
    const warn = now - bucket.warnedAt >= this.capacity * this.refillMs;
    if (warn) bucket.warnedAt = now;
    return { delayMs, warn };
  }

  /**
   * Pays a retry of `key` by `writer` from the writer's bucket: the delay it may run after, its
   * backoff `delayMs` or the time its token comes, whichever is later. A change of the Service
   * meanwhile is still admitted at once (it may be the fix), and pays its own token.
   */
  payRetry(writer: string, delayMs: number): number {
    const bucket = this.#take(writer, this.now());
    return bucket.tokens >= 0 ? delayMs : Math.max(delayMs, Math.ceil(-bucket.tokens * this.refillMs));
  }

  /** How many namespaces have a bucket. */
  get writers(): number {
    return this.#buckets.size;
  }

  /** Takes a token (now, or reserved for when it refills) from `writer`'s bucket, refilled to `now`. */
  #take(writer: string, now: number): Bucket {
    let bucket = this.#buckets.get(writer);
    if (!bucket) {
      if (this.#buckets.size >= this.#pruneAt) this.#prune(now);
      bucket = { tokens: this.capacity, at: now, warnedAt: -Infinity };
      this.#buckets.set(writer, bucket);
    }
    bucket.tokens = refilled(bucket.tokens, bucket.at, now, this.capacity, this.refillMs);
    bucket.at = now;
    bucket.tokens -= 1;
    return bucket;
  }

  /**
   * Drops the buckets that have refilled: a new one is the same. (A bucket refills from empty in
   * the time a Warning waits to be said again, so nothing is forgotten that matters.)
   */
  #prune(now: number): void {
    for (const [writer, b] of this.#buckets) {
      if (refilled(b.tokens, b.at, now, this.capacity, this.refillMs) >= this.capacity) {
        this.#buckets.delete(writer);
      }
    }
    this.#pruneAt = Math.max(MAX_BUCKETS, 2 * this.#buckets.size);
  }
}

/** The Warning on a Service whose namespace's changes are throttled. */
export function throttledMessage(
  delayMs: number,
  burst = SERVICE_CHANGE_BURST,
  refillMs = SERVICE_CHANGE_REFILL_MS,
): string {
  return `the Services of this namespace changed more than ${burst} times in a short while, each change ` +
    `costing cloud writes: changes are now synced one per ${refillMs / 1000} s; this one in ` +
    `${Math.ceil(delayMs / 1000)} s (nothing is lost: the sync reads the Service as it is then)`;
}
