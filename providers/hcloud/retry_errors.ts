/**
 * The Hetzner provider's door for errors: the API's busy and rate-limit answers (`locked`,
 * `conflict`, a `Retry-After`) become the reconcile runtime's {@link RetryAfterError}, so no generic
 * code reads Hetzner's error codes. The message stays the API's (events and logs read the same).
 *
 * @module
 */
import { CloudApiError } from "../../hcloud_api/mod.ts";
import { ProviderError, RetryAfterError } from "../errors.ts";

/** Delay after a cloud resource was busy (`locked`, `conflict`): its action usually ends within seconds. */
export const BUSY_MS = 2_000;

/**
 * Delay after a project limit was reached (`resource_limit_exceeded`: the project's balancers, a type's
 * services): room comes when someone deletes something, not in seconds, so the retry waits long
 * (security review Q3: three requests every backoff, forever, for each Service over the limit). Routes
 * and targets read this code themselves first (their own limits).
 */
export const LIMIT_MS = 600_000;

/** `err` as the reconcile runtime should see it (see the module doc). */
export function toRetryable(err: unknown): unknown {
  if (err instanceof ProviderError) {
    const inner = toRetryable(err.cause);
    if (inner === err.cause) return err;
    return new ProviderError(inner, { warnings: [...err.warnings], leftNoBalancer: err.leftNoBalancer });
  }
  if (!(err instanceof CloudApiError)) return err;
  const ms = err.retryAfterSeconds !== undefined
    ? err.retryAfterSeconds * 1000
    : err.code === "locked" || err.code === "conflict"
    ? BUSY_MS
    : err.code === "resource_limit_exceeded"
    ? LIMIT_MS
    : undefined;
  return ms === undefined ? err : new RetryAfterError(err.message, ms, { cause: err });
}
