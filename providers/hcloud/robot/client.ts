/**
 * A small client for the Robot webservice: the three reads a CCM needs (server list, server, reset
 * state) over a swappable `fetch`-like transport, with Basic auth, a timeout, a metric per call,
 * Robot's error envelope turned into {@link CloudApiError}, and a quiet window after Robot's rate
 * limit answers (its limits are per hour, so asking again at once only keeps them exhausted).
 *
 * @module
 */
import type { Registry } from "../../../lib/metrics.ts";
import { CloudApiError } from "../../../hcloud_api/mod.ts";
import { currentSignal, withCurrent } from "../../../lib/cancellation.ts";

/** The contract under the client: any `fetch`-like function. Tests may swap it. */
export type RobotTransport = (request: Request) => Promise<Response>;

/** A dedicated server as the CCM uses it. */
export interface RobotServerInfo {
  /** The server's number (`hrobot://<number>` on its Node). */
  number: number;
  /** Its name in Robot (what its Node is matched by). */
  name: string;
  /** Main IPv4, when the server has one. */
  ipv4?: string;
  /** The /64 without its length (`2a01:4f8:1:2::`), when the server has IPv6. */
  ipv6Net?: string;
  /** Its product (`AX41-NVMe`): the Node's instance type. */
  product: string;
  /** Its data center (`FSN1-DC14`): the Node's zone and region come from it. */
  dc: string;
}

/** Settings of {@link RobotClient}. */
export interface RobotClientOptions {
  endpoint: string;
  user: string;
  password: string;
  rateLimitWaitMs: number;
  userAgent?: string;
  timeoutMs?: number;
  metrics?: Registry;
  fetch?: RobotTransport;
}

/** See the module doc. */
export class RobotClient {
  readonly #options: RobotClientOptions;
  readonly #auth: string;
  readonly #send: RobotTransport;
  readonly #requests;
  #quietUntil = 0;
  #problem?: string;

  /** A client for `options.endpoint` with `options`' credentials. */
  constructor(options: RobotClientOptions) {
    this.#options = options;
    this.#auth = `Basic ${btoa(`${options.user}:${options.password}`)}`;
    this.#send = options.fetch ?? ((r) => fetch(r));
    this.#requests = options.metrics?.counter(
      "robot_api_requests_total",
      "A counter for requests to the Robot webservice per endpoint (code 0 = no response or not sent).",
    );
  }

  /** Why Robot cannot be used now (rejected credentials), never the credentials themselves. */
  problem(): string | undefined {
    return this.#problem;
  }

  /** Every dedicated server of the account (Robot's scarcest call: 200 per hour). */
  async servers(): Promise<RobotServerInfo[]> {
    const body = await this.#get("/server", "/server") as { server: RawServer }[];
    return body.map((entry) => toInfo(entry.server));
  }

  /** One server by number, or undefined when Robot does not know it. */
  async server(number: number): Promise<RobotServerInfo | undefined> {
    try {
      return toInfo(
        (await this.#get(`/server/${number}`, "/server/{number}") as { server: RawServer }).server,
      );
    } catch (err) {
      if (err instanceof CloudApiError && err.code === "SERVER_NOT_FOUND") return undefined;
      throw err;
    }
  }

  /** The power state `GET /reset` reports: `shut off` when the server is powered down. */
  async operatingStatus(number: number): Promise<string | undefined> {
    const body = await this.#get(`/reset/${number}`, "/reset/{number}") as {
      reset: { operating_status?: string };
    };
    return body.reset.operating_status;
  }

  async #get(path: string, endpoint: string): Promise<unknown> {
    if (Date.now() < this.#quietUntil) {
      this.#requests?.inc({ code: "0", method: "get", api_endpoint: endpoint });
      throw new CloudApiError(
        `Robot rate limit reached; no Robot call until ${new Date(this.#quietUntil).toISOString()}`,
        {
          status: 403,
          code: "RATE_LIMIT_EXCEEDED",
          retryAfterSeconds: Math.ceil((this.#quietUntil - Date.now()) / 1000),
        },
      );
    }
    const request = new Request(`${this.#options.endpoint}${path}`, {
      headers: {
        authorization: this.#auth,
        accept: "application/json",
        "user-agent": this.#options.userAgent ?? "deno-ccm",
      },
      signal: withCurrent(AbortSignal.timeout(this.#options.timeoutMs ?? 15_000)),
    });
    let response: Response;
    try {
      response = await this.#send(request);
    } catch (err) {
      if (request.signal.aborted && currentSignal()?.aborted) throw currentSignal()!.reason;
      this.#requests?.inc({ code: "0", method: "get", api_endpoint: endpoint });
      throw new CloudApiError(`Robot GET ${endpoint}: no response (${(err as Error).name})`, {
        status: 0,
        code: "unavailable",
        cause: err,
      });
    }
    this.#requests?.inc({ code: String(response.status), method: "get", api_endpoint: endpoint });
    const text = await response.text();
    if (response.ok) {
      this.#problem = undefined;
      return JSON.parse(text);
    }
    let error: { code?: string; message?: string } = {};
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error ?? {};
    } catch { /* not Robot's envelope (a proxy's page) */ }
    const code = error.code ?? (response.status >= 500 ? "unavailable" : `http_${response.status}`);
    if (response.status === 401) {
      this.#problem =
        `Robot rejected the credentials of ROBOT_USER (401 ${code}) at ${this.#options.endpoint}`;
    }
    // The official CCM treats any 403 as Robot's rate limit as well.
    if (code === "RATE_LIMIT_EXCEEDED" || response.status === 403) {
      this.#quietUntil = Date.now() + this.#options.rateLimitWaitMs;
    }
    throw new CloudApiError(
      `Robot GET ${endpoint}: ${response.status} ${code}: ${error.message ?? ""}`.trim(),
      {
        status: response.status,
        code,
      },
    );
  }
}

interface RawServer {
  server_number: number;
  server_name: string;
  server_ip: string | null;
  server_ipv6_net: string | null;
  product: string;
  dc: string;
}

function toInfo(s: RawServer): RobotServerInfo {
  return {
    number: s.server_number,
    name: s.server_name,
    ...(s.server_ip ? { ipv4: s.server_ip } : {}),
    ...(s.server_ipv6_net ? { ipv6Net: s.server_ipv6_net.replace(/\/\d+$/, "") } : {}),
    product: s.product ?? "",
    dc: s.dc ?? "",
  };
}
