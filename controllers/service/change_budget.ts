/**
 * One tenant cannot spend the project's budget by churning its Services (issue 41 item 4): every
 * change a namespace makes to its Services (a create, or an update the controller acts on) costs
 * cloud writes, so the syncs those changes start are admitted from a token bucket per namespace —
 * {@link SERVICE_CHANGE_BURST} at once, then one per {@link SERVICE_CHANGE_REFILL_MS}. A change past
 * that is synced later, not dropped (reconcile is level-based: the delayed sync reads the Service as
 * it is then, so a burst of edits to one Service costs one sync), and the Service gets a Warning once
 * per hold. Resyncs, Node changes and retries are not counted: the CCM starts those, not the tenant.
 *
 * Worst case per namespace: 100 syncs in a burst, then 360 an hour, each a few writes at most.
 *
 * @module
 */
import { refilled } from "../../lib/token_bucket.ts";

/** Service syncs a namespace may start at once. */
export const SERVICE_CHANGE_BURST = 100;
/** After the burst, one more per this long. */
export const SERVICE_CHANGE_REFILL_MS = 10_000;

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
    const bucket = this.#buckets.get(writer) ?? { tokens: this.capacity, at: now, warnedAt: -Infinity };
    this.#buckets.set(writer, bucket);
    bucket.tokens = refilled(bucket.tokens, bucket.at, now, this.capacity, this.refillMs);
    bucket.at = now;
    bucket.tokens -= 1; // taken now, or reserved for the moment it refills
    if (bucket.tokens >= 0) return { delayMs: 0, warn: false };
    const delayMs = Math.ceil(-bucket.tokens * this.refillMs);
    this.#pending.set(key, now + delayMs);
    const warn = now - bucket.warnedAt >= this.capacity * this.refillMs;
    if (warn) bucket.warnedAt = now;
    return { delayMs, warn };
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
