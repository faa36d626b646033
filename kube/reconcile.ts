/**
 * The reconcile runtime's one retry contract (controller-runtime's `reconcile` package, upstream's
 * `api.RetryError`), handed to every worker loop: input that retrying cannot fix waits for the
 * object to change ({@link TerminalError}); a conflict, a busy resource or a Retry-After comes back
 * after a fixed delay ({@link RetryAfterError}, a Kubernetes conflict or Retry-After); everything
 * else backs off per key. A cloud's own error codes are mapped onto these by its provider, never
 * read here.
 *
 * @module
 */
import type { RetryPolicy } from "./work_queue.ts";
import { KubeApiError } from "./errors.ts";

/**
 * Retrying cannot help until the input changes (a bad annotation, say). Controllers report it as
 * an event and wait for the object to change instead of backing off forever.
 */
export class TerminalError extends Error {
  /** `message` says what to change (the field and value), never a secret. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/**
 * Retry after exactly `retryAfterMs`, without growing the backoff (upstream `api.RetryError`).
 * Work queues honour `retryAfterMs`.
 */
export class RetryAfterError extends Error {
  /** The delay before the next attempt. */
  readonly retryAfterMs: number;
  /** Retried after `retryAfterMs`. */
  constructor(message: string, retryAfterMs: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RetryAfterError";
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * An error that adds context to its `cause` (what else to report, say) and is retried exactly as
 * its cause is; its message is the cause's.
 */
export class WrappedError extends Error {
  /** Wraps `cause`, taking its message and name. */
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = cause instanceof Error ? cause.name : "Error";
  }
}

/** The innermost cause behind any {@link WrappedError}s. */
export function rootCause(err: unknown): unknown {
  while (err instanceof WrappedError) err = err.cause;
  return err;
}

/** Delay after a conflict: the informer has (or soon has) the newer version. */
const CONFLICT_MS = 200;

/** See the module doc. */
export const reconcilePolicy: RetryPolicy = (err) => {
  err = rootCause(err);
  if (err instanceof TerminalError) return "forget";
  if (err instanceof RetryAfterError) return { afterMs: err.retryAfterMs };
  if (err instanceof KubeApiError) {
    if (err.retryAfterSeconds !== undefined) return { afterMs: err.retryAfterSeconds * 1000 };
    if (err.isConflict) return { afterMs: CONFLICT_MS };
  }
  return undefined;
};
