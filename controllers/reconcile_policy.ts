/**
 * The controllers' one retry contract (controller-runtime's `Result`/`TerminalError` in our terms),
 * handed to every worker loop: input that retrying cannot fix waits for the object to change; a
 * conflict, a busy cloud resource or a Retry-After from either API comes back after a fixed delay;
 * everything else backs off per key.
 *
 * @module
 */
import type { RetryPolicy } from "../kube/work_queue.ts";
import { KubeApiError } from "../kube/errors.ts";
import { CloudApiError, RetryAfterError, TerminalError } from "../providers/errors.ts";

/** Delay after a conflict: the informer has (or soon has) the newer version. */
const CONFLICT_MS = 200;
/** Delay after a cloud resource was busy (`locked`, `conflict`): its action usually ends within seconds. */
const BUSY_MS = 2_000;

/** See the module doc. */
export const reconcilePolicy: RetryPolicy = (err) => {
  if (err instanceof TerminalError) return "forget";
  if (err instanceof RetryAfterError) return { afterMs: err.retryAfterMs };
  if (err instanceof KubeApiError) {
    if (err.retryAfterSeconds !== undefined) return { afterMs: err.retryAfterSeconds * 1000 };
    if (err.isConflict) return { afterMs: CONFLICT_MS };
  }
  if (err instanceof CloudApiError) {
    if (err.retryAfterSeconds !== undefined) return { afterMs: err.retryAfterSeconds * 1000 };
    if (err.code === "locked" || err.code === "conflict") return { afterMs: BUSY_MS };
  }
  return undefined;
};
