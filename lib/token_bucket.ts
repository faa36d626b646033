/**
 * Client-side rate limiting: a token bucket like client-go's (qps refill, burst capacity).
 *
 * @module
 */
import { abortableSleep } from "./sleep.ts";

/** Hands out tokens at `qps` per second with room for `burst` at once; callers wait in FIFO order. */
export class TokenBucket {
  #tokens: number;
  #last: number;
  #tail: Promise<void> = Promise.resolve();

  /** `qps <= 0` disables limiting. */
  constructor(readonly qps: number, readonly burst: number, private readonly now: () => number = Date.now) {
    this.#tokens = Math.max(1, burst);
    this.#last = now();
  }

  /** Resolves when a token is available; rejects if `signal` aborts first. */
  take(signal?: AbortSignal): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    const turn = this.#tail.then(() => this.#waitForToken(signal));
    // The next caller queues behind this one whether it succeeds or is aborted.
    this.#tail = turn.catch(() => {});
    return turn;
  }

  async #waitForToken(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.now();
      this.#tokens = Math.min(Math.max(1, this.burst), this.#tokens + ((now - this.#last) / 1000) * this.qps);
      this.#last = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      await abortableSleep(((1 - this.#tokens) / this.qps) * 1000, signal);
    }
  }
}

/**
 * The tokens a bucket holds at `now` (at most `capacity`) when it held `tokens` at `at` and one comes
 * back per `perTokenMs`: the arithmetic of the synchronous per-writer budgets (one Node's label
 * changes, one namespace's Service syncs), which ask how long to wait instead of waiting.
 */
export function refilled(
  tokens: number,
  at: number,
  now: number,
  capacity: number,
  perTokenMs: number,
): number {
  return Math.min(capacity, tokens + (now - at) / perTokenMs);
}
