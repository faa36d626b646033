/**
 * Simulated `/load_balancers` (CRUD and every action) and `/certificates`.
 *
 * @module
 */
import { BodyReader, faults } from "./http_kit.ts";
import { validLabels } from "../lib/label_selector.ts";
import { LOAD_BALANCER_TYPES, LOCATIONS } from "./catalog.ts";
import {
  addService,
  addTarget,
  directTargetCount,
  readService,
  readTarget,
  renderLoadBalancer,
  replaceService,
  sameTarget,
} from "./lb_model.ts";
import { actionReply, byId, listResponse, route, type SimRoute } from "./router.ts";
import { resourceActionRoutes } from "./routes_servers.ts";
import type { LoadBalancer, PrimaryIp, World } from "./world.ts";

const labelsCheck = (v: Record<string, unknown>) =>
  validLabels(v) ? undefined : "contains an invalid label key or value";
/** Action commands that differ from their route's name. */
const ACTION_COMMANDS: Record<string, string> = { change_type: "change_load_balancer_type" };

const findType = (v: string) => LOAD_BALANCER_TYPES.find((t) => t.name === v || String(t.id) === v);

function attach(world: World, lb: LoadBalancer, networkId: number, ip?: string, ipRange?: string): void {
  const network = byId(world.networks, String(networkId), "network");
  if (lb.private_net.some((p) => p.network === network.id)) {
    throw faults.code(
      422,
      "load_balancer_already_attached",
      "load balancer is already attached to this network",
    );
  }
  const chosen = world.allocatePrivateIp(network, lb.location.network_zone, ip, ipRange);
  lb.private_net.push({ network: network.id, ip: chosen });
  network.load_balancers = [...(network.load_balancers ?? []), lb.id];
}

/** The routes of this file. */
export function loadBalancerRoutes(): SimRoute[] {
  const get = (world: World, id: string) => byId(world.loadBalancers, id, "load balancer");
  const reply = (world: World, lb: LoadBalancer) => ({
    status: 200,
    body: { load_balancer: renderLoadBalancer(world, lb) },
  });
  /** A mutating action: reads the body, checks the lock, applies `change`, starts the action. */
  const act = (
    command: string,
    change: (r: BodyReader, lb: LoadBalancer, world: World, body: Record<string, unknown>) => void,
    durationMs?: number,
  ) =>
    route("POST", `/load_balancers/{id}/actions/${command}`, (req, p, { world }) => {
      const lb = get(world, p.id);
      const r = new BodyReader(req.body);
      world.assertUnlocked("load_balancer", lb.id);
      change(r, lb, world, (req.body ?? {}) as Record<string, unknown>);
      r.done();
      return actionReply(
        world.startAction(
          ACTION_COMMANDS[command] ?? command,
          [{ id: lb.id, type: "load_balancer" }],
          durationMs,
        ),
      );
    });
  return [
    route(
      "GET",
      "/load_balancers",
      (req, _p, ctx) =>
        listResponse(
          [...ctx.world.loadBalancers.values()].map((lb) => renderLoadBalancer(ctx.world, lb)),
          req,
          ctx,
          "load_balancers",
        ),
    ),
    route("POST", "/load_balancers", (req, _p, { world }) => {
      const r = new BodyReader(req.body);
      const name = r.string("name", { required: true });
      const typeName = r.idOrName("load_balancer_type", {
        required: true,
        check: (v) => findType(v) ? undefined : "load balancer type not found",
      });
      const locationRef = r.idOrName("location", {
        check: (v) =>
          LOCATIONS.some((l) => l.name === v || String(l.id) === v) ? undefined : "location not found",
      });
      const location = LOCATIONS.find((l) => String(l.id) === locationRef)?.name ?? locationRef;
      const zone = r.string("network_zone", {
        check: (v) => LOCATIONS.some((l) => l.network_zone === v) ? undefined : "network zone not found",
      });
      if (r.has("location") && r.has("network_zone")) {
        r.fail("network_zone", "location and network_zone are mutually exclusive");
        r.fail("location", "location and network_zone are mutually exclusive");
      } else if (!r.has("location") && !r.has("network_zone")) {
        r.fail("location", "location or network_zone is required");
      }
      const labels = r.object("labels", { check: labelsCheck });
      const algorithm = r.object("algorithm");
      const algo = algorithm
        ? r.nested(algorithm, "algorithm.").string("type", {
          check: (v) =>
            ["round_robin", "least_connections"].includes(v)
              ? undefined
              : "must be round_robin or least_connections",
        })
        : undefined;
      const network = r.int("network");
      const publicInterface = r.bool("public_interface") ?? true;
      const publicNet = r.object("public_net");
      const primary = publicNet
        ? readPrimaryIps(world, r.nested(publicNet, "public_net."), publicInterface)
        : {};
      const services = r.array("services") ?? [];
      const targets = r.array("targets") ?? [];
      if (name && [...world.loadBalancers.values()].some((lb) => lb.name === name)) {
        throw faults.uniqueness("name");
      }
      r.done();
      const loc = LOCATIONS.find((l) => l.name === location) ??
        LOCATIONS.find((l) => l.network_zone === zone)!;
      for (const ip of Object.values(primary)) {
        if (ip.location.name !== loc.name) {
          throw faults.code(
            422,
            "primary_ip_location_mismatch",
            `Primary IP ${ip.id} is in ${ip.location.name}, the load balancer in ${loc.name}`,
          );
        }
      }
      const addresses = world.publicAddresses();
      const lb: LoadBalancer = {
        id: world.id(),
        name: name!,
        created: new Date(world.now()).toISOString(),
        labels: (labels ?? {}) as Record<string, string>,
        protection: { delete: false },
        algorithm: { type: (algo ?? "round_robin") as "round_robin" },
        load_balancer_type: findType(typeName!)!,
        location: loc,
        public_net: {
          enabled: publicInterface,
          ipv4: primary.ipv4 ? primaryAddress(primary.ipv4.ip, primary.ipv4.id) : {
            ip: addresses.ipv4,
            dns_ptr: `static.${addresses.ipv4.split(".").reverse().join(".")}.clients.your-server.de`,
          },
          ipv6: primary.ipv6
            ? primaryAddress(primary.ipv6.ip.replace(/\/\d+$/, "1"), primary.ipv6.id)
            : { ip: addresses.ipv6, dns_ptr: "" },
        },
        private_net: [],
        services: [],
        targets: [],
        included_traffic: 21990232555520,
        ingoing_traffic: 0,
        outgoing_traffic: 0,
      };
      if (network !== undefined) attach(world, lb, network);
      services.forEach((s, i) =>
        addService(world, lb, readService(r.nested(s, `services[${i}].`), s as Record<string, unknown>))
      );
      targets.forEach((t, i) =>
        addTarget(world, lb, readTarget(r.nested(t, `targets[${i}].`), t as Record<string, unknown>))
      );
      r.done();
      world.loadBalancers.set(lb.id, lb);
      for (const ip of Object.values(primary)) {
        ip.assignee_id = lb.id;
        ip.assignee_type = "load_balancer" as "server";
      }
      const action = world.startAction("create_load_balancer", [{ id: lb.id, type: "load_balancer" }]);
      return { status: 201, body: { load_balancer: renderLoadBalancer(world, lb), action } };
    }),
    route("GET", "/load_balancers/{id}", (_req, p, { world }) => reply(world, get(world, p.id))),
    route("PUT", "/load_balancers/{id}", (req, p, { world }) => {
      const lb = get(world, p.id);
      const r = new BodyReader(req.body);
      const name = r.string("name");
      const labels = r.object("labels", { check: labelsCheck });
      r.done();
      if (name && name !== lb.name && [...world.loadBalancers.values()].some((x) => x.name === name)) {
        throw faults.uniqueness("name");
      }
      if (name) lb.name = name;
      if (labels) lb.labels = labels as Record<string, string>;
      return reply(world, lb);
    }),
    route("DELETE", "/load_balancers/{id}", (_req, p, { world }) => {
      const lb = get(world, p.id);
      if (lb.protection.delete) throw faults.protectedResource();
      world.assertUnlocked("load_balancer", lb.id);
      for (const pn of lb.private_net) {
        const network = world.networks.get(pn.network!);
        if (network) network.load_balancers = (network.load_balancers ?? []).filter((id) => id !== lb.id);
      }
      world.loadBalancers.delete(lb.id);
      // Its Primary IPs are deleted with it or left unassigned, as their auto_delete says.
      for (const ip of [...world.primaryIps.values()]) {
        if (ip.assignee_id !== lb.id || ip.assignee_type !== ("load_balancer" as "server")) continue;
        if (ip.auto_delete) world.primaryIps.delete(ip.id);
        else [ip.assignee_id, ip.assignee_type] = [null, "server"];
      }
      return { status: 204 };
    }),
    act("add_service", (r, lb, world, body) => {
      const service = readService(r, body);
      r.done();
      addService(world, lb, service);
    }),
    act("update_service", (r, lb, world, body) => {
      const port = r.int("listen_port", { required: true });
      r.done();
      const index = lb.services.findIndex((s) => s.listen_port === port);
      if (index < 0) throw faults.notFound("service");
      replaceService(world, lb, index, readService(r, body, lb.services[index]));
    }),
    act("delete_service", (r, lb) => {
      const port = r.int("listen_port", { required: true });
      r.done();
      const index = lb.services.findIndex((s) => s.listen_port === port);
      if (index < 0) throw faults.notFound("service");
      lb.services.splice(index, 1);
    }),
    act("add_target", (r, lb, world, body) => {
      const target = readTarget(r, body);
      r.done();
      addTarget(world, lb, target);
    }),
    act("remove_target", (r, lb, _world, body) => {
      const target = readTarget(r, body);
      r.done();
      const index = lb.targets.findIndex((t) => sameTarget(t, target));
      if (index < 0) throw faults.notFound("target");
      lb.targets.splice(index, 1);
    }),
    act("change_algorithm", (r, lb) => {
      const type = r.string("type", {
        required: true,
        check: (v) =>
          ["round_robin", "least_connections"].includes(v)
            ? undefined
            : "must be round_robin or least_connections",
      });
      r.done();
      lb.algorithm = { type: type as "round_robin" };
    }),
    act("change_type", (r, lb) => {
      const name = r.idOrName("load_balancer_type", {
        required: true,
        check: (v) => findType(v) ? undefined : "load balancer type not found",
      });
      r.done();
      const type = findType(name!)!;
      if (directTargetCount(lb) > type.max_targets || lb.services.length > type.max_services) {
        throw faults.code(
          403,
          "resource_limit_exceeded",
          "the load balancer has more targets or services than the new type allows",
        );
      }
      lb.load_balancer_type = type;
    }),
    act("attach_to_network", (r, lb, world) => {
      const network = r.int("network", { required: true });
      const ip = r.string("ip");
      const ipRange = r.string("ip_range");
      r.done();
      attach(world, lb, network!, ip, ipRange);
    }),
    act("detach_from_network", (r, lb, world) => {
      const networkId = r.int("network", { required: true });
      r.done();
      if (!lb.private_net.some((p) => p.network === networkId)) {
        throw faults.code(
          422,
          "load_balancer_not_attached_to_network",
          "load balancer is not attached to this network",
        );
      }
      lb.private_net = lb.private_net.filter((p) => p.network !== networkId);
      const network = world.networks.get(networkId!);
      if (network) network.load_balancers = (network.load_balancers ?? []).filter((id) => id !== lb.id);
    }),
    act("enable_public_interface", (_r, lb) => void (lb.public_net.enabled = true)),
    act("disable_public_interface", (_r, lb) => {
      if (lb.private_net.length === 0) {
        throw faults.code(
          422,
          "load_balancer_not_attached_to_network",
          "a load balancer without a network must keep its public interface",
        );
      }
      lb.public_net.enabled = false;
    }),
    act("change_protection", (r, lb) => {
      const del = r.bool("delete");
      if (del !== undefined) lb.protection.delete = del;
    }, 0),
    act("change_dns_ptr", (r, lb, _world, body) => {
      const ip = r.string("ip", { required: true });
      if (!r.has("dns_ptr")) r.fail("dns_ptr", "is required");
      r.done();
      const dnsPtr = (body.dns_ptr as string | null | undefined) ?? null;
      if (lb.public_net.ipv4.ip === ip) lb.public_net.ipv4.dns_ptr = dnsPtr;
      else if (lb.public_net.ipv6.ip === ip) lb.public_net.ipv6.dns_ptr = dnsPtr;
      else throw faults.invalid({ ip: ["IP does not belong to this load balancer"] });
    }),
    ...resourceActionRoutes("load_balancers", "load_balancer", (w) => w.loadBalancers),
  ];
}

/**
 * `public_net: {ipv4, ipv6}` of a load balancer create (Primary IP IDs; the API's Primary IPs for
 * load balancers, newer than the spec copy): each must exist, be of its family, unassigned and not
 * blocked, and needs the public interface.
 */
function readPrimaryIps(
  world: World,
  r: BodyReader,
  publicInterface: boolean,
): { ipv4?: PrimaryIp; ipv6?: PrimaryIp } {
  const out: { ipv4?: PrimaryIp; ipv6?: PrimaryIp } = {};
  for (const family of ["ipv4", "ipv6"] as const) {
    const id = r.int(family);
    if (id === undefined) continue;
    const ip = world.primaryIps.get(id);
    if (!ip) {
      r.fail(family, `Primary IP ${id} not found`);
      continue;
    }
    if (ip.type !== family) {
      throw faults.code(422, "primary_ip_version_mismatch", `Primary IP ${id} is ${ip.type}, not ${family}`);
    }
    if (ip.assignee_id !== null || ip.blocked) {
      throw faults.code(422, "primary_ip_assigned", `Primary IP ${id} is assigned or blocked`);
    }
    if (!publicInterface) {
      r.fail(family, "a Primary IP needs the public interface (public_interface: true)");
      continue;
    }
    out[family] = ip;
  }
  return out;
}

/** A balancer address from a Primary IP: the API names its ID (a field newer than the spec copy). */
function primaryAddress(ip: string, id: number): { ip: string; dns_ptr: string } {
  const address = { ip, dns_ptr: "", id };
  return address;
}
