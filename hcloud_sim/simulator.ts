/**
 * A Hetzner Cloud API simulator on `Deno.serve`: the `/v1` API (bearer auth, per-token rate limit
 * with `RateLimit-*` headers, JSON error envelopes, pagination) over a {@link World}, plus a control
 * API under `/_sim/` for tests: seeding, server power and deletion, fault injection, and an audit
 * log of every `/v1` request.
 *
 * @module
 */
import { DataPath, type DataPathOptions } from "./data_path.ts";
import { ApiFault, faults, type Reply, type SimRequest } from "./http_kit.ts";
import type { HandlerContext, SimRoute } from "./router.ts";
import { renderServer, serverRoutes } from "./routes_servers.ts";
import { primaryIpRoutes } from "./routes_primary_ips.ts";
import { keyAndImageRoutes } from "./routes_keys_images.ts";
import { certificateRoutes } from "./routes_certificates.ts";
import { moreResourceRoutes } from "./routes_more_resources.ts";
import { firewallRoutes } from "./routes_firewalls.ts";
import { networkRoutes } from "./routes_networks.ts";
import { loadBalancerRoutes } from "./routes_load_balancers.ts";
import { loadBalancerMetricsRoutes } from "./routes_lb_metrics.ts";
import { type ServerSeed, World } from "./world.ts";
import { controlRoutes } from "./control.ts";
import { SimControl } from "./sim_control.ts";
import type { AuditEntry, Faults } from "./faults.ts";
export type { AuditEntry, FaultRule, Faults } from "./faults.ts";
import { RobotSim } from "./robot.ts";

const placeholders = (pattern: string) => pattern.split("{").length - 1;

/** Settings of a {@link Simulator}. */
export interface SimulatorOptions {
  hostname?: string;
  port?: number;
  /** Accepted API tokens (one project). */
  tokens?: string[];
  /** Requests per hour per token (default 3600, refilling evenly). */
  rateLimit?: number;
  actionDurationMs?: number;
  latencyMs?: number;
  /**
   * Routes and servers one Network holds (default Hetzner's 100 each). Benchmarks of clusters
   * larger than that raise `servers` to measure the CCM's side, and say so.
   */
  networkLimits?: { routes?: number; servers?: number };
  /** Called for every `/v1` response (tests validate bodies against the OpenAPI schema). */
  onResponse?: (info: { method: string; route: string; status: number; body: unknown }) => void;
  quiet?: boolean;
  /** Where random faults come from (default `Math.random`; a seeded one replays a run's faults). */
  random?: () => number;
}

/** The token the simulator accepts by default (64 characters, like real tokens). */
export const DEFAULT_SIM_TOKEN = "sim".padEnd(64, "0123456789abcdef");

/** A running simulator. */
export class Simulator {
  readonly world = new World();
  /** The Robot webservice under `/robot` (dedicated servers). */
  readonly robot = new RobotSim();
  readonly audit: AuditEntry[] = [];
  faults: Faults = { rules: [], latencyMs: 0, rateLimitBurst: 0 };
  /** What happens to the project outside any API client (console edits, vanishing servers, faults). */
  readonly control: SimControl = new SimControl(this.world, this.robot, {
    get: () => this.faults,
    set: (f) => this.faults = f,
  });
  readonly tokens: Set<string>;
  /** Literal paths first (`/servers/actions` before `/servers/{id}`), as the real API routes them. */
  readonly #routes: SimRoute[] = [
    ...serverRoutes(),
    ...primaryIpRoutes(),
    ...keyAndImageRoutes(),
    ...certificateRoutes(),
    ...moreResourceRoutes(),
    ...firewallRoutes(),
    ...networkRoutes(),
    ...loadBalancerRoutes(),
    ...loadBalancerMetricsRoutes(),
  ].sort((a, b) => placeholders(a.pattern) - placeholders(b.pattern));
  readonly #control: SimRoute[];
  readonly #buckets = new Map<string, { remaining: number; at: number }>();
  readonly #limit: number;
  readonly #options: SimulatorOptions;
  #server?: Deno.HttpServer<Deno.NetAddr>;
  /** Responses with status 429 sent so far. */
  rateLimited = 0;
  /** 429s for an exhausted hourly budget (not injected) so far. */
  budgetExceeded = 0;
  /** Requests delayed by a latency spike so far. */
  latencySpikes = 0;

  constructor(options: SimulatorOptions = {}) {
    this.#options = options;
    this.tokens = new Set(options.tokens ?? [DEFAULT_SIM_TOKEN]);
    this.#limit = options.rateLimit ?? 3600;
    this.world.actionDurationMs = options.actionDurationMs ?? 1_000;
    Object.assign(this.world.networkLimits, options.networkLimits ?? {});
    this.faults.latencyMs = options.latencyMs ?? 0;
    if (options.random) this.world.random = options.random;
    this.#control = controlRoutes(this);
  }

  /** Starts listening (port 0 = any free port). */
  start(): this {
    this.#server = Deno.serve({
      hostname: this.#options.hostname ?? "127.0.0.1",
      port: this.#options.port ?? 0,
      onListen: (addr) => {
        if (!this.#options.quiet) {
          console.error(`hcloud simulator listening on http://${addr.hostname}:${addr.port}/v1`);
        }
      },
    }, (req) => this.handle(req));
    return this;
  }

  /** `http://host:port` of the running server. */
  get url(): string {
    const addr = this.#server!.addr;
    return `http://${addr.hostname}:${addr.port}`;
  }

  /** The API endpoint, for `HCLOUD_ENDPOINT`. */
  get endpoint(): string {
    return `${this.url}/v1`;
  }

  /** The Robot webservice's base URL, for `ROBOT_ENDPOINT` (hrobot-go's `SetBaseURL`). */
  get robotEndpoint(): string {
    return `${this.url}/robot`;
  }

  /** The data path, once {@link enableDataPath} started it. */
  dataPath?: DataPath;

  /** Starts the data path (opt-in): balancers listen on loopback and forward (data_path.ts). */
  enableDataPath(options: DataPathOptions): DataPath {
    this.dataPath ??= new DataPath(this.world, options);
    return this.dataPath;
  }

  /** Stops the server (and the data path). */
  async stop(): Promise<void> {
    this.dataPath?.stop();
    await this.#server?.shutdown();
  }

  /** Adds a server (seeding). */
  addServer(seed: ServerSeed) {
    return this.world.addServer(seed);
  }

  /** Audit entries whose route matches `pattern` (a `METHOD /path` regex), counted. */
  count(pattern: RegExp = /./, since = 0): number {
    return this.audit.filter((e) => e.time >= since && pattern.test(e.route)).length;
  }

  /** Handles one HTTP request (exported for tests that need no socket). */
  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/_sim/")) return await this.#control_(request, url);
    if (url.pathname.startsWith("/robot/")) return await this.robot.handle(request, url.pathname.slice(6));
    if (!url.pathname.startsWith("/v1/")) return json(404, faults.notFound("endpoint").body());
    const path = url.pathname.slice(3);
    const headers = new Headers({ "content-type": "application/json" });
    const match = this.#match(this.#routes, request.method, path);
    // The audit names the route from the start, whatever the answer: a request refused (401, 429) and
    // one still in flight when a benchmark counts are counted by endpoint too.
    const routeName = match ? `${request.method} ${match.route.pattern}` : `${request.method} ${path}`;
    const entry: AuditEntry = {
      time: this.world.now(),
      method: request.method,
      path,
      query: url.search,
      route: routeName,
      status: 0,
      userAgent: request.headers.get("user-agent") ?? "",
    };
    this.audit.push(entry);
    const spike = this.faults.latencySpike && this.world.random() < this.faults.latencySpike.rate;
    if (spike) this.latencySpikes++;
    const extra = this.faults.latencyMs + (spike ? this.faults.latencySpike!.ms : 0);
    if (extra > 0) await new Promise((r) => setTimeout(r, extra));

    const auth = request.headers.get("authorization") ?? "";
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    const rate = this.#takeToken(this.tokens.has(token) ? token : "anonymous");
    headers.set("RateLimit-Limit", String(this.#limit));
    headers.set("RateLimit-Remaining", String(rate.remaining));
    headers.set("RateLimit-Reset", String(rate.reset));
    let reply: Reply;
    try {
      if (!this.tokens.has(token)) throw faults.unauthorized();
      if (!rate.allowed || this.faults.rateLimitBurst > 0) {
        if (this.faults.rateLimitBurst > 0) this.faults.rateLimitBurst--;
        else this.budgetExceeded++;
        throw faults.code(429, "rate_limit_exceeded", "limit of requests per hour reached");
      }
      if (!match) {
        // IDs are numbers: `/servers/1/actions/rebuild` is an endpoint we do not simulate (404, as the
        // real API answers an unknown route), not `GET /servers/{id}/actions/{action_id}` (405).
        const otherMethod = this.#routes.some((r) => {
          const m = r.regex.exec(path);
          return !!m && Object.values(m.groups ?? {}).every((v) => /^\d+$/.test(v));
        });
        throw otherMethod
          ? faults.code(405, "method_not_allowed", "method not allowed")
          : faults.notFound("endpoint");
      }
      const injected = this.#injected(routeName, entry);
      if (injected && !injected.applied) return injected.respond(headers);
      const body = await readJson(request);
      // Called in-process (never started), the request's own origin is the API's.
      const baseUrl = this.#server ? this.endpoint : `${url.origin}/v1`;
      const ctx: HandlerContext = { world: this.world, baseUrl };
      const req: SimRequest = { method: request.method, path, query: url.searchParams, body };
      reply = match.route.handler(req, match.params, ctx);
      // Applied, its answer lost on the way back.
      if (injected) return injected.respond(headers);
    } catch (err) {
      if (!(err instanceof ApiFault)) console.error("simulator handler failed:", err);
      const fault = err instanceof ApiFault ? err : faults.code(500, "server_error", "internal error");
      reply = { status: fault.status, body: fault.body() };
    }
    entry.status = reply.status;
    if (reply.status === 429) this.rateLimited++;
    for (const [k, v] of Object.entries(reply.headers ?? {})) headers.set(k, v);
    this.#options.onResponse?.({
      method: request.method,
      route: routeName,
      status: reply.status,
      body: reply.body,
    });
    if (reply.status === 204) return new Response(null, { status: 204, headers });
    return new Response(JSON.stringify(reply.body), { status: reply.status, headers });
  }

  /** Resolves a control or API route. */
  #match(routes: SimRoute[], method: string, path: string) {
    for (const route of routes) {
      if (route.method !== method) continue;
      const m = route.regex.exec(path);
      if (m) return { route, params: { ...m.groups } as Record<string, string> };
    }
    return undefined;
  }

  #injected(
    routeName: string,
    entry: AuditEntry,
  ): { applied: boolean; respond: (headers: Headers) => Response } | undefined {
    const now = this.world.now();
    for (const rule of this.faults.rules) {
      if (rule.untilMs !== undefined && now > rule.untilMs) continue;
      if (rule.count !== undefined && rule.count <= 0) continue;
      if (!new RegExp(rule.match).test(routeName)) continue;
      if (rule.skip !== undefined && rule.skip > 0) {
        rule.skip--;
        continue;
      }
      if (this.world.random() >= (rule.rate ?? 1)) continue;
      if (rule.count !== undefined) rule.count--;
      entry.route = routeName;
      entry.status = rule.status;
      if (rule.status === 429) this.rateLimited++;
      const applied = rule.applied === true;
      if (rule.html) {
        return {
          applied,
          respond: (headers) => {
            headers.set("content-type", "text/html");
            return new Response(`<html><body><h1>${rule.status} Bad Gateway</h1></body></html>`, {
              status: rule.status,
              headers,
            });
          },
        };
      }
      const body = faults.code(rule.status, rule.code, rule.message ?? `injected ${rule.code}`).body();
      this.#options.onResponse?.({ method: entry.method, route: routeName, status: rule.status, body });
      return {
        applied,
        respond: (headers) => new Response(JSON.stringify(body), { status: rule.status, headers }),
      };
    }
    return undefined;
  }

  #takeToken(key: string): { allowed: boolean; remaining: number; reset: number } {
    const now = this.world.now();
    const perMs = this.#limit / 3_600_000;
    const bucket = this.#buckets.get(key) ?? { remaining: this.#limit, at: now };
    bucket.remaining = Math.min(this.#limit, bucket.remaining + (now - bucket.at) * perMs);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    const allowed = bucket.remaining >= 1;
    if (allowed) bucket.remaining -= 1;
    const remaining = Math.floor(bucket.remaining);
    const reset = Math.ceil((now + (this.#limit - bucket.remaining) / perMs) / 1000);
    return { allowed, remaining, reset };
  }

  async #control_(request: Request, url: URL): Promise<Response> {
    const path = url.pathname.slice("/_sim".length);
    const match = this.#match(this.#control, request.method, path);
    if (!match) return json(404, faults.notFound("control endpoint").body());
    try {
      const body = await readJson(request);
      const reply = match.route.handler(
        { method: request.method, path, query: url.searchParams, body },
        match.params,
        {
          world: this.world,
          baseUrl: this.endpoint,
        },
      );
      return reply.status === 204 ? new Response(null, { status: 204 }) : json(reply.status, reply.body);
    } catch (err) {
      const fault = err instanceof ApiFault ? err : faults.code(500, "server_error", String(err));
      return json(fault.status, fault.body());
    }
  }

  /** Renders a server as the API would (for the control API). */
  render(id: number) {
    const server = this.world.servers.get(id);
    return server && renderServer(this.world, server);
  }
}

async function readJson(request: Request): Promise<unknown> {
  if (request.method === "GET" || request.method === "DELETE" || request.method === "HEAD") {
    await request.body?.cancel();
    return undefined;
  }
  const text = await request.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw faults.json((err as Error).message);
  }
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
