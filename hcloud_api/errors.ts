/**
 * The Hetzner API's errors, as the API room reports them.
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
