/**
 * The transport under the hcloud client: one function from `Request` to `Response` that adds the
 * token, a timeout, rate-limit awareness (`RateLimit-*` headers), retries with jittered backoff for
 * requests that are safe to repeat, and a metric for every API call.
 *
 * @module
 */
import type { Registry } from "../lib/metrics.ts";
import { backoffDelay } from "../lib/sleep.ts";
import { type Clock, sleepOn, SYSTEM_CLOCK } from "../lib/clock.ts";
import type { Credentials } from "./credentials.ts";
import { logger } from "../lib/log.ts";
import { currentPriority, RESERVE } from "../lib/priority.ts";
import { withCurrent } from "../lib/cancellation.ts";
import { CloudApiError } from "./errors.ts";
import { describeNetworkError } from "../lib/network_error.ts";
import { boundedStream, exactNumbers } from "./bounded_answer.ts";
import { processRandom } from "../lib/random.ts";

/** The contract: any `fetch`-like function. Tests may swap it. */
export type HcloudTransport = (request: Request) => Promise<Response>;

/** Header the client sets with the OpenAPI path template (`/servers/{id}`) for metrics; never sent. */
export const ENDPOINT_HEADER = "x-deno-ccm-endpoint";

/**
 * Header the client sets on a list it reads as it streams (`listAllStreamed`); never sent. Its
 * answer is passed on unread, counted against `MAX_STREAMED_BYTES`: the reader holds one item
 * at a time and checks each item's numbers itself (`checkAnswerText`, bounded_answer.ts).
 */
export const STREAM_HEADER = "x-deno-ccm-streamed";

/** The API's rate-limit state as last reported. */
export interface RateLimitState {
  /** Requests the bucket holds when full (`RateLimit-Limit`). */
  limit: number;
  /** Requests left in it (`RateLimit-Remaining`). */
  remaining: number;
  /** Unix seconds when the bucket is full again. */
  reset: number;
  /** When this was observed (ms since epoch). */
  at: number;
}

/** Settings of {@link createTransport}. */
export interface TransportOptions {
  /** The token, or credentials that may change (a rotated token file) and hear the API's verdict. */
  token: string | Credentials;
  /** `User-Agent` of every request. */
  userAgent?: string;
  /** Per attempt, default 15 s (the official CCM's). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 5). */
  maxRetries?: number;
  /** Backoff base (default 1 s, doubling, capped at 30 s, with jitter). */
  retryBaseMs?: number;
  /** Where requests, their latency and the rate-limit state are counted. */
  metrics?: Registry;
  /** The fetch to send with (default: global fetch). */
  fetch?: HcloudTransport;
  /**
   * The signal of the work this process may do (leadership, or the process): once it aborts, no
   * write is sent any more and waits for budget end at once (a lost lease must not leave writes in
   * flight behind the new leader).
   */
  fence?: () => AbortSignal | undefined;
  /** What pauses and budget waits are timed on (default: the system clock; a test's fake one replays). */
  clock?: Clock;
}

/** A transport plus the rate-limit state it observed. */
export interface InstrumentedTransport {
  /** Sends one request (with retries, the budget and the fence applied). */
  send: HcloudTransport;
  /** What the API last said of the rate limit (undefined before the first answer). */
  rateLimit: RateLimitState | undefined;
  /** Why the API cannot be reached now (the last request's failure), or undefined when it answers. */
  unreachable: string | undefined;
}

/** Builds the transport. */
export function createTransport(options: TransportOptions): InstrumentedTransport {
  const log = logger("hcloud");
  const send = options.fetch ?? ((r: Request) => fetch(r));
  const clock = options.clock ?? SYSTEM_CLOCK;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxRetries = options.maxRetries ?? 5;
  const base = options.retryBaseMs ?? 1_000;
  const m = options.metrics;
  // Named and labelled as hcloud-go's instrumentation in the official CCM, so its dashboards work:
  // `api_endpoint` is the path template with `%d` for IDs, `method` lower case.
  const requests = m?.counter(
    "hcloud_api_requests_total",
    "A counter for requests to the hcloud api per endpoint (code 0 = no response).",
  );
  const inFlight = m?.gauge(
    "hcloud_api_in_flight_requests",
    "A gauge of in-flight requests to the hcloud api.",
  );
  const latency = m?.histogram(
    "hcloud_api_request_duration_seconds",
    "Hetzner Cloud API request latency by method.",
  );
  const remainingGauge = m?.gauge(
    "hcloud_api_ratelimit_remaining",
    "Requests left in the API's rate-limit bucket.",
  );
  const budgetWaits = m?.counter(
    "hcloud_api_budget_waits_total",
    "Requests held back to keep budget for more important work, by priority.",
  );
  const budgetWait = m?.histogram(
    "hcloud_api_budget_wait_seconds",
    "Time requests waited for budget, by priority.",
  );
  const state: InstrumentedTransport = {
    rateLimit: undefined,
    unreachable: undefined,
    send: () => Promise.reject(),
  };
  // Since when no request got an answer (undefined: the last one did): the first failure of a streak
  // is logged at once, naming the endpoint and the cause; the retries that follow are not.
  let unreachableSince: number | undefined;
  /** After a 429, no request is sent before this moment (ms since epoch). */
  let pausedUntil = 0;

  /**
   * Respects the bucket: waits until it holds more than this priority's reserve (plus one request)
   * instead of earning a 429 (the bucket refills evenly, limit per hour), then any 429 pause.
   */
  const waitForBudget = async (waits: AbortSignal) => {
    const rl = state.rateLimit;
    if (rl) {
      const priority = currentPriority();
      const perTokenMs = 3_600_000 / Math.max(1, rl.limit);
      const floor = RESERVE[priority] * rl.limit + 1;
      const estimate = Math.min(rl.limit, rl.remaining + (clock.now() - rl.at) / perTokenMs);
      if (estimate < floor) {
        const waitMs = (floor - estimate) * perTokenMs;
        budgetWaits?.inc({ priority });
        budgetWait?.observe({ priority }, waitMs / 1000);
        log.info("cloud API budget low ({remaining} left): holding {priority} work for {ms} ms", {
          remaining: Math.floor(estimate),
          priority,
          ms: Math.round(waitMs),
        });
        await sleepOn(clock, waitMs, waits);
      }
    }
    if (pausedUntil > clock.now()) await sleepOn(clock, pausedUntil - clock.now(), waits);
  };

  state.send = async (original: Request) => {
    const endpoint = (original.headers.get(ENDPOINT_HEADER) ?? new URL(original.url).pathname)
      .replace(/\{[^}]+\}/g, "%d");
    const body = original.body ? await original.arrayBuffer() : undefined;
    const idempotent = original.method === "GET" || original.method === "HEAD";
    const streamed = original.headers.get(STREAM_HEADER) === "1";
    // The request's own signal and the current work's (see lib/cancellation.ts): either ends the call.
    const cancel = withCurrent(original.signal);
    let resentWithNewToken = false;
    for (let attempt = 0;; attempt++) {
      const fence = options.fence?.();
      const fenced = () =>
        new CloudApiError(`${original.method} ${endpoint} not sent: this process no longer leads`, {
          status: 0,
          code: "fenced",
        });
      if (!idempotent && fence?.aborted) throw fenced();
      try {
        await waitForBudget(fence ? AbortSignal.any([cancel, fence]) : cancel);
      } catch (err) {
        if (!idempotent && fence?.aborted && !cancel.aborted) throw fenced();
        throw err;
      }
      if (!idempotent && fence?.aborted) throw fenced();
      cancel.throwIfAborted();
      const headers = new Headers(original.headers);
      headers.delete(ENDPOINT_HEADER);
      headers.delete(STREAM_HEADER);
      const token = typeof options.token === "string" ? options.token : options.token.token();
      try {
        headers.set("authorization", `Bearer ${token}`);
      } catch {
        // Deno's Headers quote a value they refuse: that would be the token.
        throw new TypeError(HEADER_REFUSED);
      }
      headers.set("user-agent", options.userAgent ?? "deno-ccm");
      const signal = AbortSignal.any([cancel, AbortSignal.timeout(timeoutMs)]);
      const started = performance.now();
      let response: Response | undefined;
      let failure: unknown;
      inFlight?.add({}, 1);
      try {
        response = await send(new Request(original.url, { method: original.method, headers, body, signal }));
      } catch (err) {
        if (cancel.aborted) throw cancel.reason;
        // The HTTP client quotes a header value it refuses: that would be the token.
        failure = err instanceof Error && /header/i.test(err.message) ? new TypeError(HEADER_REFUSED) : err;
      } finally {
        inFlight?.add({}, -1);
      }
      if (response) unreachableSince = state.unreachable = undefined;
      else if (!(failure instanceof TypeError && failure.message === HEADER_REFUSED)) {
        const origin = new URL(original.url).origin;
        failure = new CloudApiError(
          `${original.method} ${endpoint}: cannot reach ${origin}: ${describeNetworkError(failure)}`,
          { status: 0, code: "connection_failed", cause: failure },
        );
        state.unreachable = (failure as Error).message;
        if (unreachableSince === undefined) {
          unreachableSince = clock.now();
          log.warning("{error}; retrying", { error: (failure as Error).message });
        }
      }
      const code = response?.status ?? 0;
      requests?.inc({ code: String(code), method: original.method.toLowerCase(), api_endpoint: endpoint });
      latency?.observe({ method: original.method }, (performance.now() - started) / 1000);
      if (response) {
        const limit = Number(response.headers.get("ratelimit-limit"));
        const remaining = Number(response.headers.get("ratelimit-remaining"));
        const reset = Number(response.headers.get("ratelimit-reset"));
        if (response.headers.has("ratelimit-remaining") && Number.isFinite(remaining)) {
          state.rateLimit = { limit: limit || 3600, remaining, reset, at: clock.now() };
          remainingGauge?.set({}, remaining);
        }
      }
      // A 401 with a token that has since been rotated: the request was not processed, send it again.
      if (response && typeof options.token !== "string" && options.token.answered(code, token)) {
        if (!resentWithNewToken) {
          resentWithNewToken = true;
          await response.body?.cancel();
          attempt--;
          continue;
        }
      }
      // 429 was not processed, so any method may repeat it; 5xx and lost connections only for reads.
      const retryable = code === 429 || (idempotent && (code === 0 || code >= 500));
      if (!retryable || attempt >= maxRetries) {
        if (response) {
          return streamed && response.ok ? boundedStream(response) : await exactNumbers(response);
        }
        throw failure;
      }
      const retryAfter = Number(response?.headers.get("retry-after"));
      // A 429 means the project's bucket is empty and refills by one request per second: every
      // request waits about that long (a shared pause, so concurrent ones do not each earn a 429),
      // not an exponential backoff that would idle the CCM long after the bucket has refilled.
      const delay = retryAfter > 0
        ? retryAfter * 1000
        : code === 429
        ? base * (1 + processRandom() * 0.5)
        : backoffDelay(attempt, { baseMs: base, maxMs: 30_000, jitter: 0.5 });
      if (code === 429) pausedUntil = Math.max(pausedUntil, clock.now() + delay);
      await response?.body?.cancel();
      log.debug("{method} {endpoint} answered {code}; retry {n} in {ms} ms", {
        method: original.method,
        endpoint,
        code,
        n: attempt + 1,
        ms: Math.round(delay),
      });
      await sleepOn(clock, delay, cancel);
    }
  };
  return state;
}

const HEADER_REFUSED = "the HTTP client refused a request header (its value is withheld)";
