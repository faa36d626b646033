/**
 * The cancellation signal of the current work. A provider binds the signal its caller handed it
 * (`withSignal`) at its entry points; the cloud transport below reads it (`currentSignal`) for every
 * request, retry sleep and budget wait, so a cancelled reconcile (SIGTERM, a lost lease) ends its
 * cloud calls without threading the signal through every internal helper. This is the `ctx` that
 * Go's cloud-provider methods take, carried the way `withPriority` carries the work's priority.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";

const storage = new AsyncLocalStorage<AbortSignal | undefined>();

/** Runs `fn` with `signal` as the cancellation of every cloud call it makes (none: unchanged). */
export function withSignal<T>(signal: AbortSignal | undefined, fn: () => T): T {
  if (!signal) return fn();
  const outer = storage.getStore();
  return storage.run(outer && outer !== signal ? AbortSignal.any([outer, signal]) : signal, fn);
}

/** The signal of the current work, if any. */
export function currentSignal(): AbortSignal | undefined {
  return storage.getStore();
}

/** `signal` combined with the current work's signal (either aborting aborts the result). */
export function withCurrent(signal: AbortSignal): AbortSignal {
  const work = storage.getStore();
  return work ? AbortSignal.any([signal, work]) : signal;
}

/** Runs `fn` outside any work's signal: for work shared by many callers (one poll loop for all). */
export function detached<T>(fn: () => T): T {
  // Not `storage.exit`: under Deno the outer store comes back after the first await.
  return storage.run(undefined, fn);
}
