/**
 * Typed errors a provider may throw. "Not found" is never an error: providers return `undefined`
 * or `false` for it.
 *
 * @module
 */

// Hetzner's API error lives with the API room; re-exported while the retry policy still reads it.
export { CloudApiError } from "../hcloud_api/mod.ts";

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

const attached = new WeakMap<Error, { reason: string; message: string }[]>();

/**
 * Warnings that belong with a failed call (e.g. "type unconfigured" found before an annotation
 * error): the controller records them along with the failure.
 */
export function attachWarnings(err: unknown, warnings: { reason: string; message: string }[]): void {
  if (!(err instanceof Error) || warnings.length === 0) return;
  attached.set(err, [...attached.get(err) ?? [], ...warnings]);
}

const withoutBalancer = new WeakSet<Error>();

/**
 * Marks a failed ensure as one that left the Service without a balancer of its own (none was found,
 * and none was made): the controller then stops advertising the Service's old addresses.
 */
export function markNoBalancer(err: unknown): void {
  if (err instanceof Error) withoutBalancer.add(err);
}

/** Whether {@link markNoBalancer} marked `err`. */
export function leftNoBalancer(err: unknown): boolean {
  return err instanceof Error && withoutBalancer.has(err);
}

/** The warnings attached to `err` by {@link attachWarnings}. */
export function warningsOf(err: unknown): { reason: string; message: string }[] {
  return err instanceof Error ? attached.get(err) ?? [] : [];
}
