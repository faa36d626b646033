/**
 * The transport contract under the Kubernetes client, and its implementation on `fetch` with
 * `Deno.createHttpClient` (TLS trust, client certificates), bearer tokens that rotate, client-side
 * QPS/burst limiting, request timeouts and request metrics.
 *
 * @module
 */
import type { ClusterConnection } from "./kubeconfig.ts";
import { KubeApiError } from "./errors.ts";
import { TokenBucket } from "../lib/token_bucket.ts";
import type { Registry } from "../lib/metrics.ts";
import { describeNetworkError } from "../lib/network_error.ts";

/** One HTTP request to the apiserver. */
export interface KubeRequest {
  /** The HTTP method. */
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute API path, e.g. `/api/v1/nodes/n1`. */
  path: string;
  /** Query parameters (selectors, paging, watch). */
  query?: URLSearchParams;
  /** Serialized body. */
  body?: string;
  /** The body's media type (JSON, or one of the patch types). */
  contentType?: string;
  /** Cancels the request. */
  signal?: AbortSignal;
  /** A long-running watch: the timeout covers only the wait for response headers. */
  watch?: boolean;
  /** Kubernetes verb for metrics (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`). */
  verb?: string;
}

/** Sends requests; answers every HTTP status with a `Response` and throws only when none arrived. */
export interface KubeTransport {
  /** Sends one request; resolves with any HTTP answer, rejects only when no answer came. */
  send(request: KubeRequest): Promise<Response>;
  /** Releases connections. */
  close(): void;
}

/** Settings of {@link HttpTransport}. */
export interface HttpTransportOptions {
  /** Client-side requests per second (upstream `--kube-api-qps`, default 20); <= 0 disables. */
  qps?: number;
  /** Burst above qps (upstream `--kube-api-burst`, default 30). */
  burst?: number;
  /** Per-request timeout in ms (default 30 s). */
  timeoutMs?: number;
  userAgent?: string;
  metrics?: Registry;
  /** How long a token read from a token file is trusted before re-reading it (default 60 s). */
  tokenFileRefreshMs?: number;
}

/** The real transport: `fetch` plus a per-connection `Deno.HttpClient`. */
export class HttpTransport implements KubeTransport {
  readonly #conn: ClusterConnection;
  readonly #client: Deno.HttpClient;
  readonly #limiter: TokenBucket;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #tokenRefreshMs: number;
  #fileToken?: { value: string; readAt: number };
  readonly #requests;
  readonly #latency;

  constructor(conn: ClusterConnection, options: HttpTransportOptions = {}) {
    this.#conn = conn;
    const tls: { cert?: string; key?: string } = {};
    if (conn.clientCertPem && conn.clientKeyPem) {
      tls.cert = conn.clientCertPem;
      tls.key = conn.clientKeyPem;
    }
    // insecure-skip-tls-verify has no per-client switch in Deno; it needs the runtime flag
    // --unsafely-ignore-certificate-errors=<host> (docs/explanation/design.md). The CA is then irrelevant.
    const caCerts = conn.caPem && !conn.insecureSkipTlsVerify ? [conn.caPem] : undefined;
    this.#client = Deno.createHttpClient({ caCerts, ...tls });
    this.#limiter = new TokenBucket(options.qps ?? 20, options.burst ?? 30);
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#userAgent = options.userAgent ?? "deno-ccm";
    this.#tokenRefreshMs = options.tokenFileRefreshMs ?? 60_000;
    this.#requests = options.metrics?.counter(
      "kube_api_requests_total",
      "Requests to the Kubernetes API by verb and HTTP code (0 = no response).",
    );
    this.#latency = options.metrics?.histogram(
      "kube_api_request_duration_seconds",
      "Latency of Kubernetes API requests by verb (watch: until headers).",
    );
  }

  async send(request: KubeRequest): Promise<Response> {
    await this.#limiter.take(request.signal);
    const verb = request.verb ?? request.method.toLowerCase();
    const started = performance.now();
    let response = await this.#fetch(request, false);
    if (response.status === 401 && this.#conn.tokenFile) {
      // The token may have rotated since we last read it: re-read once and retry.
      await response.body?.cancel();
      response = await this.#fetch(request, true);
    }
    this.#requests?.inc({ verb, code: String(response.status) });
    this.#latency?.observe({ verb }, (performance.now() - started) / 1000);
    return response;
  }

  close(): void {
    this.#client.close();
  }

  async #fetch(request: KubeRequest, rereadToken: boolean): Promise<Response> {
    const url = `${this.#conn.server}${request.path}${request.query?.size ? `?${request.query}` : ""}`;
    const headers = new Headers({ "user-agent": this.#userAgent, accept: "application/json" });
    if (request.contentType) headers.set("content-type", request.contentType);
    const auth = await this.#authorization(rereadToken);
    if (auth) headers.set("authorization", auth);

    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException(`timed out after ${this.#timeoutMs} ms`, "TimeoutError")),
      this.#timeoutMs,
    );
    const signal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal;
    const label = `${request.method} ${request.path}`;
    try {
      const response = await fetch(url, {
        method: request.method,
        headers,
        body: request.body,
        signal,
        client: this.#client,
      });
      if (!request.watch) {
        // Keep the timeout running over the body read of ordinary requests by buffering it here.
        const body = await response.arrayBuffer();
        return new Response(response.status === 204 ? null : body, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        });
      }
      return response;
    } catch (err) {
      this.#requests?.inc({ verb: request.verb ?? request.method.toLowerCase(), code: "0" });
      if (request.signal?.aborted) throw request.signal.reason;
      throw new KubeApiError(
        label,
        0,
        "ConnectionFailed",
        `cannot reach ${this.#conn.server}: ${describeNetworkError(err)}`,
        { cause: err },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  async #authorization(reread: boolean): Promise<string | undefined> {
    const conn = this.#conn;
    if (conn.tokenFile) {
      const cached = this.#fileToken;
      if (reread || !cached || Date.now() - cached.readAt > this.#tokenRefreshMs) {
        try {
          const value = (await Deno.readTextFile(conn.tokenFile)).trim();
          this.#fileToken = { value, readAt: Date.now() };
        } catch (err) {
          // Keep using the last good token; a missing file is reported by the 401 that follows.
          if (!cached) {
            throw new KubeApiError("read token", 0, "TokenUnreadable", (err as Error).message, {
              cause: err,
            });
          }
        }
      }
      return `Bearer ${this.#fileToken!.value}`;
    }
    if (conn.token) return `Bearer ${conn.token}`;
    if (conn.username !== undefined) return `Basic ${btoa(`${conn.username}:${conn.password ?? ""}`)}`;
    return undefined;
  }
}
