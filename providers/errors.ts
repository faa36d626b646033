/**
 * The errors a provider throws, as the controllers read them. "Not found" is never an error:
 * providers return `undefined` or `false` for it.
 *
 * Retrying is the reconcile runtime's decision ({@link TerminalError}, {@link RetryAfterError},
 * re-exported here for implementers); a provider maps its cloud's busy and rate-limit answers onto
 * them. What a failure adds for the controller (warnings to record with it, a Service left without
 * a balancer of its own) travels in a {@link ProviderError} around the cause.
 *
 * @module
 */
import { RetryAfterError, rootCause, TerminalError, WrappedError } from "../kube/reconcile.ts";
import type { ProviderWarning } from "./warning.ts";

export { RetryAfterError, rootCause, TerminalError, WrappedError };

/**
 * The cloud holds no more of something (routes in a network, say): creating another fails until
 * some go. The controller reports it and waits for the count to fall instead of retrying.
 */
export class LimitReachedError extends Error {
  /** `what` in words ("routes in network k8s"); `limit` when the cloud says or documents it. */
  constructor(readonly what: string, readonly limit: number | undefined, options?: ErrorOptions) {
    super(`the cloud holds no more ${what}${limit === undefined ? "" : ` (its limit is ${limit})`}`, options);
    this.name = "LimitReachedError";
  }
}

/** What a {@link ProviderError} adds to its cause. */
export interface ProviderErrorDetails {
  /**
   * Warnings that belong with the failure (e.g. "type unconfigured" found before an annotation
   * error): the controller records them along with it.
   */
  warnings?: ProviderWarning[];
  /**
   * The failed ensure left the Service without a balancer of its own (none was found and none
   * made): the controller stops advertising the Service's old addresses.
   */
  leftNoBalancer?: boolean;
}

/** A failed provider call with what the controller should also say and do; retried as its cause is. */
export class ProviderError extends WrappedError {
  /** See {@link ProviderErrorDetails.warnings}. */
  readonly warnings: readonly ProviderWarning[];
  /** See {@link ProviderErrorDetails.leftNoBalancer}. */
  readonly leftNoBalancer: boolean;

  /** `cause` is what failed; `details` what the controller should also say and do. */
  constructor(cause: unknown, details: ProviderErrorDetails = {}) {
    super(cause);
    this.warnings = details.warnings ?? [];
    this.leftNoBalancer = details.leftNoBalancer ?? false;
  }

  /**
   * `err` with `more` added: a ProviderError around the same cause with the warnings appended, or a
   * new one around `err`.
   */
  static with(err: unknown, more: ProviderErrorDetails): ProviderError {
    if (!(err instanceof ProviderError)) return new ProviderError(err, more);
    return new ProviderError(err.cause, {
      warnings: [...err.warnings, ...more.warnings ?? []],
      leftNoBalancer: err.leftNoBalancer || (more.leftNoBalancer ?? false),
    });
  }
}

/** The warnings a failure carries (none unless it is a {@link ProviderError}). */
export function warningsOf(err: unknown): readonly ProviderWarning[] {
  return err instanceof ProviderError ? err.warnings : [];
}

/** Whether a failed ensure left the Service without a balancer of its own. */
export function leftNoBalancer(err: unknown): boolean {
  return err instanceof ProviderError && err.leftNoBalancer;
}
