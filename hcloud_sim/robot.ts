/**
 * The Robot webservice (dedicated root servers) as a CCM uses it, under `/robot` next to the Cloud
 * API: `GET /server`, `GET|POST /server/{number}` (rename), `GET|POST /reset/{number}`. HTTP Basic
 * auth, Robot's error envelope (`{"error": {"status", "code", "message"}}`), form-encoded writes,
 * and Robot's small per-endpoint hourly limits (403 `RATE_LIMIT_EXCEEDED` with `max_request` and
 * `interval`), counted per user over a sliding hour.
 *
 * @module
 */

/** A dedicated server as Robot describes it (the fields hrobot-go reads). */
export interface RobotServer {
  server_ip: string | null;
  /** `2a01:4f8:1:2::` (the /64 without its length), or null for an IPv4-only server. */
  server_ipv6_net: string | null;
  server_number: number;
  server_name: string;
  product: string;
  dc: string;
  traffic: string;
  status: "ready" | "in process";
  cancelled: boolean;
  paid_until: string;
  ip: string[];
  subnet: { ip: string; mask: string }[];
}

/** How a Robot server is seeded. */
export interface RobotServerSeed {
  server_number?: number;
  server_name: string;
  server_ip?: string | null;
  server_ipv6_net?: string | null;
  product?: string;
  dc?: string;
  /** Power state as `GET /reset` reports it (default running). */
  power?: "on" | "off";
}

/** Robot's documented hourly limits per endpoint (the server list is the scarce one). */
export const ROBOT_LIMITS: Record<string, number> = {
  "GET /server": 200,
  "GET /server/{number}": 200,
  "POST /server/{number}": 200,
  "GET /reset/{number}": 500,
  "POST /reset/{number}": 50,
};

/** One audited Robot request. */
export interface RobotAuditEntry {
  time: number;
  route: string;
  status: number;
}

/** The Robot part of the simulator. */
export class RobotSim {
  readonly servers = new Map<number, RobotServer>();
  readonly power = new Map<number, "on" | "off">();
  readonly audit: RobotAuditEntry[] = [];
  /** Accepted `user:password` pairs. */
  readonly credentials = new Set<string>(["robot-user:robot-password"]);
  /** Multiplies every hourly limit (tests of the limit use small ones). */
  limitScale = 1;
  /** When set, every request fails with this status (an outage). */
  outage?: number;
  #next = 100_000;
  readonly #calls = new Map<string, number[]>();

  /** Adds a server; numbers and addresses are made up unless given. */
  add(seed: RobotServerSeed): RobotServer {
    const number = seed.server_number ?? ++this.#next;
    this.#next = Math.max(this.#next, number);
    const octet = number % 250 + 1;
    const server: RobotServer = {
      server_ip: seed.server_ip === undefined
        ? `136.243.${Math.floor(number / 250) % 250}.${octet}`
        : seed.server_ip,
      server_ipv6_net: seed.server_ipv6_net === undefined
        ? `2a01:4f8:${(number % 65_000).toString(16)}:${octet.toString(16)}::`
        : seed.server_ipv6_net,
      server_number: number,
      server_name: seed.server_name,
      product: seed.product ?? "AX41-NVMe",
      dc: seed.dc ?? "FSN1-DC14",
      traffic: "unlimited",
      status: "ready",
      cancelled: false,
      paid_until: "2027-01-31",
      ip: [],
      subnet: [],
    };
    if (server.server_ip) server.ip.push(server.server_ip);
    if (server.server_ipv6_net) server.subnet.push({ ip: server.server_ipv6_net, mask: "64" });
    this.servers.set(number, server);
    this.power.set(number, seed.power ?? "on");
    return server;
  }

  /** Answers a request under `/robot` (`path` without that prefix). */
  async handle(request: Request, path: string): Promise<Response> {
    const entry: RobotAuditEntry = { time: Date.now(), route: `${request.method} ${path}`, status: 0 };
    this.audit.push(entry);
    const reply = (status: number, body: unknown) => {
      entry.status = status;
      return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    };
    const fail = (status: number, code: string, message: string, extra: Record<string, unknown> = {}) =>
      reply(status, { error: { status, code, message, ...extra } });
    const form = request.method === "POST" ? new URLSearchParams(await request.text()) : undefined;
    if (request.method !== "POST") await request.body?.cancel();
    // The audit names the route (not the server number) whatever the answer, an outage's included.
    const m = path.match(/^\/(server|reset)(?:\/(\d+))?$/);
    const [, kind, number] = m ?? [];
    const route = `${request.method} /${kind}${number ? "/{number}" : ""}`;
    if (m) entry.route = route;
    const user = basicUser(request.headers.get("authorization"));
    if (!user || !this.credentials.has(user)) return fail(401, "UNAUTHORIZED", "Unauthorized");
    if (this.outage) return fail(this.outage, "INTERNAL_ERROR", "robot unavailable");
    if (!m) return fail(404, "NOT_FOUND", "Not Found");
    const limit = ROBOT_LIMITS[route];
    if (limit === undefined) return fail(405, "METHOD_NOT_ALLOWED", "Method not allowed");
    if (!this.#take(`${user} ${route}`, Math.max(1, Math.round(limit * this.limitScale)))) {
      return fail(403, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded", {
        max_request: Math.max(1, Math.round(limit * this.limitScale)),
        interval: 3600,
      });
    }
    if (!number) return reply(200, [...this.servers.values()].map((server) => ({ server })));
    const server = this.servers.get(Number(number));
    if (!server) return fail(404, "SERVER_NOT_FOUND", `Server with id ${number} not found`);
    if (kind === "server") {
      if (form) {
        const name = form.get("server_name");
        if (!name) {
          return fail(400, "INVALID_INPUT", "Invalid input", { missing: ["server_name"], invalid: [] });
        }
        server.server_name = name;
      }
      return reply(200, { server: { ...server, reset: true, rescue: true, vnc: true, windows: false } });
    }
    if (form) {
      const type = form.get("type") ?? "";
      if (!["sw", "hw", "man", "power", "power_long"].includes(type)) {
        return fail(400, "INVALID_INPUT", "Invalid input", { missing: [], invalid: ["type"] });
      }
      if (type === "power" || type === "power_long") {
        this.power.set(server.server_number, this.power.get(server.server_number) === "off" ? "on" : "off");
      } else this.power.set(server.server_number, "on");
      return reply(200, { reset: { ...identity(server), type } });
    }
    return reply(200, {
      reset: {
        ...identity(server),
        type: ["sw", "hw", "man", "power", "power_long"],
        operating_status: this.power.get(server.server_number) === "off" ? "shut off" : "running",
      },
    });
  }

  /** Requests per route in the audit since `since`. */
  count(route: string, since = 0): number {
    return this.audit.filter((e) => e.time >= since && e.route === route).length;
  }

  #take(key: string, limit: number): boolean {
    const now = Date.now();
    const calls = (this.#calls.get(key) ?? []).filter((t) => t > now - 3_600_000);
    this.#calls.set(key, calls);
    if (calls.length >= limit) return false;
    calls.push(now);
    return true;
  }
}

function identity(server: RobotServer) {
  return {
    server_ip: server.server_ip,
    server_ipv6_net: server.server_ipv6_net,
    server_number: server.server_number,
  };
}

/** `user:password` of a Basic authorization header. */
function basicUser(header: string | null): string | undefined {
  if (!header?.startsWith("Basic ")) return undefined;
  try {
    return atob(header.slice(6));
  } catch {
    return undefined;
  }
}
