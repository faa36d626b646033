/**
 * Typed errors of the Kubernetes client.
 *
 * @module
 */

/** The `Status` object the apiserver returns with a failed request (the fields we use). */
export interface KubeStatus {
  /** `Status`. */
  kind?: string;
  /** `Failure` (or `Success`). */
  status?: string;
  /** What went wrong, for people. */
  message?: string;
  /** What went wrong, for programs: `NotFound`, `Conflict`, `Expired`, ... */
  reason?: string;
  /** The HTTP status. */
  code?: number;
  /** The object concerned, when to retry, and the causes of an invalid request. */
  details?: { name?: string; kind?: string; retryAfterSeconds?: number; causes?: unknown[] };
}

/** A request the apiserver answered with a non-2xx status, or could not be sent at all (status 0). */
export class KubeApiError extends Error {
  /** HTTP status; 0 when no response arrived (connection refused, timeout, TLS failure). */
  readonly status: number;
  /** `Status.reason`, e.g. `NotFound`, `Conflict`, `AlreadyExists`, `Expired`, `Forbidden`. */
  readonly reason: string;
  /** Seconds the server asked us to wait (`Retry-After` header or `details.retryAfterSeconds`). */
  readonly retryAfterSeconds?: number;
  /** HTTP method and path (no query, no credentials) of the failed request. */
  readonly request: string;

  constructor(
    request: string,
    status: number,
    reason: string,
    message: string,
    options: { retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(`${request}: ${status === 0 ? "" : `${status} ${reason}: `}${message}`, { cause: options.cause });
    this.name = "KubeApiError";
    this.request = request;
    this.status = status;
    this.reason = reason;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The object does not exist. */
  get isNotFound(): boolean {
    return this.status === 404;
  }
  /** Optimistic concurrency failure: resourceVersion or precondition mismatch. */
  get isConflict(): boolean {
    return this.status === 409 && this.reason !== "AlreadyExists";
  }
  /** A create of an object that already exists. */
  get isAlreadyExists(): boolean {
    return this.status === 409 && this.reason === "AlreadyExists";
  }
  /** The resourceVersion is too old (410 Gone, reason `Expired`): relist. */
  get isGone(): boolean {
    return this.status === 410 || this.reason === "Expired" || this.reason === "Gone";
  }
  /** Worth retrying later: no response, throttled, or a server-side failure. */
  get isTransient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }

  /** Builds the error from a failed HTTP response, reading its `Status` body when there is one. */
  static async fromResponse(request: string, response: Response): Promise<KubeApiError> {
    const text = await response.text().catch(() => "");
    let status: KubeStatus = {};
    try {
      const parsed = JSON.parse(text);
      if (parsed && typeof parsed === "object") status = parsed as KubeStatus;
    } catch {
      // Not JSON (a proxy's HTML page, say): keep a short excerpt as the message.
    }
    const header = Number(response.headers.get("retry-after"));
    const retryAfter = Number.isFinite(header) && header > 0 ? header : status.details?.retryAfterSeconds;
    return new KubeApiError(
      request,
      response.status,
      status.reason ?? response.statusText ?? "Unknown",
      status.message ?? (text.slice(0, 200).trim() || response.statusText),
      { retryAfterSeconds: retryAfter },
    );
  }
}

/**
 * A message for `/readyz` when `err` says the CCM's identity lacks a permission (403), naming what
 * it tried and the chart value that grants it; undefined for any other error (or none).
 */
export function missingPermission(err: unknown, what: string, chartValue: string): string | undefined {
  if (!(err instanceof KubeApiError) || err.status !== 403) return undefined;
  return `the CCM may not ${what} (403 Forbidden): its RBAC lacks the rule; set the chart value ` +
    `${chartValue} (or grant the rule by hand), then it starts by itself`;
}
