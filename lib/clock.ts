/**
 * Time as controllers see it: the wall clock and its timers behind one small interface, so a test
 * can run a controller's periods (sync intervals, drain periods, backoff) on a fake clock that moves
 * only when told (testing/fake_clock.ts) instead of waiting them out.
 *
 * Only what decides *when work happens* goes through it (periods, delays, the ages they compare);
 * durations measured for metrics stay on `performance.now()`.
 *
 * @module
 */

/** A handle of a timer set on a {@link Clock}. */
export type TimerId = number;

/** Something that works in steps: a work queue, as a test clock sees it. */
export interface Quiescent {
  /** The name it reports under (a work queue's name). */
  readonly name: string;
  /** Nothing waiting and nothing being processed. */
  readonly idle: boolean;
  /** Counts every step (a key added, handed out or finished): unchanged means nothing moved. */
  readonly steps: number;
  /** Queues `key` now (what a test's `sync(key)` uses). */
  add(key: string): void;
}

/** The wall clock and timers. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms`. */
  setTimeout(fn: () => void, ms: number): TimerId;
  /** Cancels a timer set by {@link Clock.setTimeout} (unknown or fired ones are ignored). */
  clearTimeout(id: TimerId): void;
  /** Calls `fn` every `ms`. */
  setInterval(fn: () => void, ms: number): TimerId;
  /** Cancels a timer set by {@link Clock.setInterval}. */
  clearInterval(id: TimerId): void;
  /**
   * Told of each work queue made on this clock; a test clock keeps them to know when work has
   * settled. The system clock ignores it.
   */
  watch?(queue: Quiescent): void;
}

/** The process's own clock: `Date.now()` and the runtime's timers. */
export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  // Deno's timer handles are numbers; the cast only quiets Node's `Timeout` typing.
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as TimerId,
  clearTimeout: (id) => clearTimeout(id),
  setInterval: (fn, ms) => setInterval(fn, ms) as unknown as TimerId,
  clearInterval: (id) => clearInterval(id),
};

/**
 * Waits `ms` on `clock`; rejects with the signal's reason when it aborts first (lib/sleep.ts's
 * `abortableSleep` on any clock).
 */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
