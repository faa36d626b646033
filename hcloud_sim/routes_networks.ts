/**
 * Simulated `/networks` with the API's validation of ranges, subnets, routes and gateways.
 *
 * @module
 */
import { BodyReader, faults } from "./http_kit.ts";
import { validLabels } from "../lib/label_selector.ts";
import { LOCATIONS } from "./catalog.ts";
import { actionReply, byId, listResponse, route, type SimRoute } from "./router.ts";
import { resourceActionRoutes } from "./routes_servers.ts";
import type { Network, World } from "./world.ts";
import { type Cidr, cidrContains, cidrsOverlap, formatIp, parseCidr } from "../lib/cidr.ts";

const PRIVATE = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"].map((c) => parseCidr(c)!);
const ZONES = [...new Set(LOCATIONS.map((l) => l.network_zone))];
const isPrivate = (c: Cidr) =>
  PRIVATE.some((p) => p.prefix <= c.prefix && cidrContains(p, formatIp(4, c.network)));

/** Checks one subnet against the network and its other subnets; returns the problem or undefined. */
function subnetProblem(
  network: { ip_range: string; subnets: Network["subnets"]; routes: Network["routes"] },
  ipRange: string,
): string | undefined {
  const cidr = parseCidr(ipRange, true);
  const range = parseCidr(network.ip_range)!;
  if (!cidr || cidr.family !== 4) return "is not a valid IPv4 CIDR range";
  if (cidr.prefix > 30) return "must be at least a /30";
  if (!(cidr.prefix >= range.prefix && cidrContains(range, formatIp(4, cidr.network)))) {
    return "must be inside the network's ip_range";
  }
  if (network.subnets.some((s) => cidrsOverlap(parseCidr(s.ip_range!)!, cidr))) {
    return "overlaps with an existing subnet";
  }
  if (network.routes.some((r) => cidrsOverlap(parseCidr(r.destination)!, cidr))) {
    return "overlaps with a route destination";
  }
  return undefined;
}

/** The first /24 of the network not used by a subnet. */
function firstFree24(network: Network): string | undefined {
  const range = parseCidr(network.ip_range)!;
  if (range.prefix > 24) return undefined;
  for (let n = range.network; n < range.network + (1n << BigInt(32 - range.prefix)); n += 256n) {
    const candidate = `${formatIp(4, n)}/24`;
    if (!subnetProblem(network, candidate)) return candidate;
  }
  return undefined;
}

function addSubnet(r: BodyReader, network: Network, value: Record<string, unknown>, field: string): void {
  const s = r.nested(value, field);
  const type = s.string("type", {
    required: true,
    check: (v) => ["cloud", "server", "vswitch"].includes(v) ? undefined : "must be cloud, server or vswitch",
  });
  const zone = s.string("network_zone", {
    required: true,
    check: (v) => ZONES.includes(v) ? undefined : "network zone does not exist",
  });
  let ipRange = s.string("ip_range");
  if (ipRange) {
    const problem = subnetProblem(network, ipRange);
    if (problem) s.fail("ip_range", problem);
  } else if (type && zone) {
    ipRange = firstFree24(network);
    if (!ipRange) s.fail("ip_range", "no free /24 left in the network");
  }
  r.absorb(s);
  if (type && zone && ipRange && !subnetProblem(network, ipRange)) {
    const gateway = formatIp(4, parseCidr(ipRange)!.network + 1n);
    network.subnets.push({
      type: type as "cloud",
      ip_range: parseCidr(ipRange)!.text,
      network_zone: zone,
      gateway,
      vswitch_id: null,
    });
  }
}

function routeProblem(network: Network, destination: string, gateway: string): Record<string, string[]> {
  const problems: Record<string, string[]> = {};
  const dest = parseCidr(destination, true);
  if (!dest || dest.family !== 4 || !(isPrivate(dest) || dest.text === "0.0.0.0/0")) {
    problems.destination = ["must be a private (RFC1918) IPv4 range or 0.0.0.0/0"];
  } else if (network.subnets.some((s) => cidrsOverlap(parseCidr(s.ip_range!)!, dest))) {
    problems.destination = ["overlaps with a subnet"];
  } else if (network.routes.some((r) => cidrsOverlap(parseCidr(r.destination)!, dest))) {
    problems.destination = ["overlaps with an existing route"];
  } else if (cidrContains(dest, "172.31.1.1")) problems.destination = ["must not contain 172.31.1.1"];
  const range = parseCidr(network.ip_range)!;
  if (
    !cidrContains(range, gateway) || gateway === formatIp(4, range.network + 1n) || gateway === "172.31.1.1"
  ) {
    problems.gateway = ["invalid gateway"];
  }
  return problems;
}

/** The routes of this file. */
export function networkRoutes(): SimRoute[] {
  const get = (world: World, id: string) => byId(world.networks, id, "network");
  const action = (world: World, network: Network, command: string) =>
    actionReply(world.startAction(command, [{ id: network.id, type: "network" }]));
  return [
    route(
      "GET",
      "/networks",
      (req, _p, ctx) => listResponse([...ctx.world.networks.values()], req, ctx, "networks"),
    ),
    route("POST", "/networks", (req, _p, { world }) => {
      const r = new BodyReader(req.body);
      const name = r.string("name", { required: true });
      const ipRange = r.string("ip_range", {
        required: true,
        check: (v) => {
          const c = parseCidr(v, true);
          if (!c || c.family !== 4 || !isPrivate(c)) return "must be a private (RFC1918) IPv4 range";
          return c.prefix > 24 ? "must be at least a /24" : undefined;
        },
      });
      const labels = r.object("labels", {
        check: (v) => validLabels(v) ? undefined : "contains an invalid label",
      });
      const subnets = r.array("subnets") ?? [];
      const routes = r.array("routes") ?? [];
      if (name && [...world.networks.values()].some((n) => n.name === name)) throw faults.uniqueness("name");
      r.done();
      const network: Network = {
        id: world.id(),
        name: name!,
        ip_range: parseCidr(ipRange!)!.text,
        subnets: [],
        routes: [],
        servers: [],
        load_balancers: [],
        labels: (labels ?? {}) as Record<string, string>,
        protection: { delete: false },
        created: new Date(world.now()).toISOString(),
        expose_routes_to_vswitch:
          (req.body as { expose_routes_to_vswitch?: boolean }).expose_routes_to_vswitch ?? false,
      };
      subnets.forEach((s, i) => addSubnet(r, network, s as Record<string, unknown>, `subnets[${i}].`));
      if (routes.length > world.networkLimits.routes) {
        throw faults.code(
          403,
          "resource_limit_exceeded",
          `a network holds at most ${world.networkLimits.routes} routes`,
        );
      }
      routes.forEach((x, i) => {
        const { destination = "", gateway = "" } = x as { destination?: string; gateway?: string };
        for (const [field, msgs] of Object.entries(routeProblem(network, destination, gateway))) {
          r.fail(`routes[${i}].${field}`, msgs.join(", "));
        }
        network.routes.push({ destination, gateway });
      });
      r.done();
      world.networks.set(network.id, network);
      return { status: 201, body: { network } };
    }),
    route(
      "GET",
      "/networks/{id}",
      (_req, p, { world }) => ({ status: 200, body: { network: get(world, p.id) } }),
    ),
    route("PUT", "/networks/{id}", (req, p, { world }) => {
      const network = get(world, p.id);
      const r = new BodyReader(req.body);
      const name = r.string("name");
      const labels = r.object("labels", {
        check: (v) => validLabels(v) ? undefined : "contains an invalid label",
      });
      const expose = r.bool("expose_routes_to_vswitch");
      r.done();
      if (name) network.name = name;
      if (labels) network.labels = labels as Record<string, string>;
      if (expose !== undefined) network.expose_routes_to_vswitch = expose;
      return { status: 200, body: { network } };
    }),
    route("DELETE", "/networks/{id}", (_req, p, { world }) => {
      const network = get(world, p.id);
      if (network.protection.delete) throw faults.protectedResource();
      world.assertUnlocked("network", network.id);
      for (const id of [...network.servers]) world.detachServer(world.servers.get(id)!, network);
      world.networks.delete(network.id);
      return { status: 204 };
    }),
    route("POST", "/networks/{id}/actions/add_route", (req, p, { world }) => {
      const network = get(world, p.id);
      const r = new BodyReader(req.body);
      const destination = r.string("destination", { required: true });
      const gateway = r.string("gateway", { required: true });
      r.done();
      world.assertUnlocked("network", network.id);
      for (const [field, msgs] of Object.entries(routeProblem(network, destination!, gateway!))) {
        r.fail(field, msgs.join(", "));
      }
      r.done();
      if (network.routes.length >= world.networkLimits.routes) {
        throw faults.code(
          403,
          "resource_limit_exceeded",
          `network ${network.name} already holds ${world.networkLimits.routes} routes, its limit`,
        );
      }
      network.routes.push({ destination: parseCidr(destination!)!.text, gateway: gateway! });
      return action(world, network, "add_route");
    }),
    route("POST", "/networks/{id}/actions/delete_route", (req, p, { world }) => {
      const network = get(world, p.id);
      const r = new BodyReader(req.body);
      const destination = r.string("destination", { required: true });
      const gateway = r.string("gateway", { required: true });
      r.done();
      world.assertUnlocked("network", network.id);
      const dest = parseCidr(destination!)?.text;
      const index = network.routes.findIndex((x) => x.destination === dest && x.gateway === gateway);
      if (index < 0) throw faults.notFound("route");
      network.routes.splice(index, 1);
      return action(world, network, "delete_route");
    }),
    route("POST", "/networks/{id}/actions/add_subnet", (req, p, { world }) => {
      const network = get(world, p.id);
      world.assertUnlocked("network", network.id);
      const r = new BodyReader(req.body);
      addSubnet(r, network, (req.body ?? {}) as Record<string, unknown>, "");
      r.done();
      return action(world, network, "add_subnet");
    }),
    route("POST", "/networks/{id}/actions/delete_subnet", (req, p, { world }) => {
      const network = get(world, p.id);
      const r = new BodyReader(req.body);
      const ipRange = r.string("ip_range", { required: true });
      r.done();
      const subnet = network.subnets.find((s) => s.ip_range === ipRange);
      if (!subnet) throw faults.invalid({ ip_range: [`no subnet ${ipRange} in this network`] });
      world.assertUnlocked("network", network.id);
      // Subnets with attached resources cannot be deleted (the API's documented rule).
      const range = parseCidr(ipRange!)!;
      const used = [...world.usedPrivateIps(network)].some((ip) => cidrContains(range, ip));
      if (used) {
        throw faults.code(422, "resource_in_use", "the subnet has attached resources; detach them first");
      }
      network.subnets = network.subnets.filter((s) => s !== subnet);
      return action(world, network, "delete_subnet");
    }),
    route("POST", "/networks/{id}/actions/change_protection", (req, p, { world }) => {
      const network = get(world, p.id);
      const r = new BodyReader(req.body);
      const del = r.bool("delete");
      r.done();
      if (del !== undefined) network.protection.delete = del;
      return actionReply(world.startAction("change_protection", [{ id: network.id, type: "network" }], 0));
    }),
    ...resourceActionRoutes("networks", "network", (w) => w.networks),
  ];
}
