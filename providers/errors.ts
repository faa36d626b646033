/**
 * Typed errors a provider may throw. "Not found" is never an error: providers return `undefined`
 * or `false` for it.
 *
 * @module
 */

/** A failed cloud API call, with the API's own error code (e.g. `locked`, `rate_limit_exceeded`). */
export class CloudApiError extends Error {
  /** HTTP status (0 when no response arrived). */
  readonly status: number;
  /** The API's error code, e.g. `invalid_input`, `conflict`, `locked`, `protected`. */
  readonly code: string;
  /** Extra data from the API (field errors, limits), never credentials. */
  readonly details?: unknown;
  /** Seconds to wait before retrying, when the API said so. */
  readonly retryAfterSeconds?: number;

  /** `options` carries the API's answer; the message must not contain credentials. */
  constructor(
    message: string,
    options: { status: number; code: string; details?: unknown; retryAfterSeconds?: number; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = "CloudApiError";
    this.status = options.status;
    this.code = options.code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** Worth retrying later with backoff: no response, rate limit, server side, or a busy resource. */
  get isTransient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500 ||
      ["conflict", "locked", "rate_limit_exceeded", "timeout", "unavailable", "server_error"].includes(
        this.code,
      );
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
