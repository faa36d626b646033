/**
 * Timing helpers: abortable sleep and jittered exponential backoff.
 *
 * @module
 */
import { processRandom } from "./random.ts";

/** Waits `ms` milliseconds; rejects with the signal's reason when it aborts first. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Settings of an exponential backoff. */
export interface BackoffOptions {
  /** First delay in ms. */
  baseMs: number;
  /** Upper bound in ms. */
  maxMs: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Fraction of random spread added (default 0: none; 0.5 = up to +50 %). */
  jitter?: number;
}

/** The delay before retry number `attempt` (0-based), capped and optionally jittered. */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = processRandom,
): number {
  const exp = options.baseMs * Math.pow(options.factor ?? 2, Math.min(attempt, 60));
  const capped = Math.min(options.maxMs, exp);
  return capped * (1 + (options.jitter ?? 0) * random());
}
