/**
 * The simulator's control API under `/_sim/` (no auth, not audited): seed state, add, delete,
 * power and re-address servers, set faults and action behaviour, and read the audit log.
 *
 * @module
 */
import { BodyReader } from "./http_kit.ts";
import { byId, route, type SimRoute } from "./router.ts";
import type { AuditEntry, Faults } from "./faults.ts";
import type { ServerSeed, World } from "./world.ts";
import type { RobotServerSeed, RobotSim } from "./robot.ts";
import type { SimControl } from "./sim_control.ts";

/** What the control routes reach of the simulator (the `Simulator` is one; it imports this file). */
export interface ControlledSimulator {
  readonly world: World;
  readonly robot: RobotSim;
  readonly control: SimControl;
  readonly faults: Faults;
  readonly audit: AuditEntry[];
  readonly rateLimited: number;
  render(id: number): unknown;
}

/** A seed document: networks first, then servers (which may attach to them). */
export interface SeedState {
  networks?: {
    name: string;
    ip_range: string;
    subnets?: { ip_range: string; network_zone: string; type?: string }[];
    routes?: { destination: string; gateway: string }[];
  }[];
  servers?: ServerSeed[];
  /** Dedicated servers in Robot. */
  robot_servers?: RobotServerSeed[];
  /** Action duration in ms. */
  action_duration_ms?: number;
}

/** Applies a seed document to the simulator's world. */
export function applySeed(sim: ControlledSimulator, seed: SeedState): void {
  const world = sim.world;
  for (const n of seed.networks ?? []) {
    const id = world.id();
    world.networks.set(id, {
      id,
      name: n.name,
      ip_range: n.ip_range,
      subnets: (n.subnets ?? []).map((s) => ({
        type: (s.type ?? "cloud") as "cloud",
        ip_range: s.ip_range,
        network_zone: s.network_zone,
        gateway: s.ip_range.replace(/\.\d+\/\d+$/, ".1"),
        vswitch_id: null,
      })),
      routes: n.routes ?? [],
      servers: [],
      load_balancers: [],
      labels: {},
      protection: { delete: false },
      created: new Date(world.now()).toISOString(),
      expose_routes_to_vswitch: false,
    });
  }
  for (const s of seed.servers ?? []) world.addServer(s);
  for (const s of seed.robot_servers ?? []) sim.robot.add(s);
  if (seed.action_duration_ms !== undefined) world.actionDurationMs = seed.action_duration_ms;
}

/** The control routes. */
export function controlRoutes(sim: ControlledSimulator): SimRoute[] {
  const server = (id: string) => byId(sim.world.servers, id, "server");
  return [
    route("GET", "/state", () => ({
      status: 200,
      body: {
        servers: [...sim.world.servers.keys()].map((id) => sim.render(id)),
        networks: [...sim.world.networks.values()],
        load_balancers: [...sim.world.loadBalancers.values()],
        certificates: [...sim.world.certificates.values()],
        primary_ips: [...sim.world.primaryIps.values()],
        ssh_keys: [...sim.world.sshKeys.values()],
        firewalls: [...sim.world.firewalls.values()],
        volumes: [...sim.world.volumes.values()],
        floating_ips: [...sim.world.floatingIps.values()],
        placement_groups: [...sim.world.placementGroups.values()],
        robot_servers: [...sim.robot.servers.values()],
      },
    })),
    route("POST", "/seed", (req) => {
      applySeed(sim, (req.body ?? {}) as SeedState);
      return { status: 204 };
    }),
    // Created in the console: recorded as create_server, as any creation is.
    route("POST", "/servers", (req) => {
      const server = sim.control.createServer(req.body as ServerSeed);
      return { status: 201, body: { server: sim.render(server.id) } };
    }),
    // Deleted in the console: the API records a delete_server action, as for any deletion.
    route("DELETE", "/servers/{id}", (_req, p) => {
      sim.control.deleteServer(server(p.id).id);
      return { status: 204 };
    }),
    // Powered off from inside (the OS shut down): no action is recorded, as with the real API.
    route("POST", "/servers/{id}/power_off", (_req, p) => {
      sim.control.setPower(server(p.id).id, false);
      return { status: 204 };
    }),
    route("POST", "/servers/{id}/power_on", (_req, p) => {
      sim.control.setPower(server(p.id).id, true);
      return { status: 204 };
    }),
    route("POST", "/servers/{id}/private_net", (req, p) => {
      // Moves the server to another IP in a network (detach + attach in one step).
      const s = server(p.id);
      const r = new BodyReader(req.body);
      const networkId = r.int("network", { required: true });
      const ip = r.string("ip");
      r.done();
      const network = byId(sim.world.networks, String(networkId), "network");
      // As the console does it: a detach and an attach action.
      sim.control.moveServerIp(s.id, network.id, ip);
      return { status: 200, body: { server: sim.render(s.id) } };
    }),
    // Robot: servers ordered or cancelled, powered off, and an outage of the whole webservice.
    route("POST", "/robot/servers", (req) => ({
      status: 201,
      body: { server: sim.robot.add(req.body as RobotServerSeed) },
    })),
    route("DELETE", "/robot/servers/{number}", (_req, p) => {
      sim.control.cancelRobotServer(Number(p.number));
      return { status: 204 };
    }),
    route("POST", "/robot/servers/{number}/power", (req, p) => {
      sim.control.setRobotPower(Number(p.number), (req.body as { power?: string })?.power !== "off");
      return { status: 204 };
    }),
    route("PUT", "/robot/outage", (req) => {
      sim.control.setRobotOutage((req.body as { status?: number })?.status || undefined);
      return { status: 204 };
    }),
    route("PUT", "/faults", (req) => {
      const body = (req.body ?? {}) as Partial<Faults> & {
        action_failure_rate?: number;
        fail_next_actions?: number;
        action_duration_ms?: number;
      };
      // The whole set of knobs: what the body leaves out is off.
      sim.control.clearFaults();
      sim.control.setFaults({
        rules: body.rules ?? [],
        latencyMs: body.latencyMs ?? 0,
        latencySpike: body.latencySpike,
        rateLimitBurst: body.rateLimitBurst ?? 0,
      });
      sim.control.setActionFailureRate(body.action_failure_rate ?? 0);
      sim.control.failNextActions(body.fail_next_actions ?? 0);
      if (body.action_duration_ms !== undefined) sim.control.setActionDuration(body.action_duration_ms);
      return { status: 200, body: sim.faults };
    }),
    route("GET", "/faults", () => ({ status: 200, body: sim.faults })),
    route("GET", "/audit", (req) => {
      const since = Number(req.query.get("since") ?? 0);
      const entries = sim.audit.filter((e) => e.time >= since);
      const byRoute: Record<string, number> = {};
      const byStatus: Record<string, number> = {};
      for (const e of entries) {
        byRoute[e.route] = (byRoute[e.route] ?? 0) + 1;
        byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
      }
      return {
        status: 200,
        body: {
          total: entries.length,
          by_route: byRoute,
          by_status: byStatus,
          rate_limited: sim.rateLimited,
          entries,
        },
      };
    }),
    route("DELETE", "/audit", () => {
      sim.audit.length = 0;
      return { status: 204 };
    }),
    route("GET", "/health", () => ({ status: 200, body: { ok: true } })),
  ];
}
