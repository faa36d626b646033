/**
 * Simulated `/primary_ips`: the public addresses of servers. Every server's public IPv4 and IPv6
 * are Primary IPs (created with it, `auto_delete`); assigning and unassigning need the server off
 * and are recorded as `assign_primary_ip` / `unassign_primary_ip` actions naming the Primary IP.
 *
 * @module
 */
import { BodyReader, faults } from "./http_kit.ts";
import { validLabels } from "../lib/label_selector.ts";
import { datacenterOf, LOCATIONS } from "./catalog.ts";
import { actionReply, byId, listResponse, route, type SimRoute } from "./router.ts";
import { resourceActionRoutes } from "./routes_servers.ts";
import type { PrimaryIp, Server, World } from "./world.ts";

const labelsCheck = (v: Record<string, unknown>) =>
  validLabels(v) ? undefined : "contains an invalid label key or value";

/** Puts `ip` on `server`'s public interface. */
function attach(server: Server, ip: PrimaryIp): void {
  const dnsPtr = ip.dns_ptr.find((d) => d.ip === ip.ip)?.dns_ptr ?? "";
  if (ip.type === "ipv4") {
    server.public_net.ipv4 = { id: ip.id, ip: ip.ip, blocked: ip.blocked, dns_ptr: dnsPtr };
  } else server.public_net.ipv6 = { id: ip.id, ip: ip.ip, blocked: ip.blocked, dns_ptr: [] };
  ip.assignee_id = server.id;
}

function detach(world: World, ip: PrimaryIp): void {
  const server = ip.assignee_id ? world.servers.get(ip.assignee_id) : undefined;
  if (server) server.public_net[ip.type] = null;
  ip.assignee_id = null;
}

/** Throws the API's errors for assigning `ip` to `server`. */
function checkAssignable(server: Server, type: "ipv4" | "ipv6"): void {
  if (server.status !== "off") {
    throw faults.code(422, "server_not_stopped", "The Server is running, but needs to be powered off");
  }
  if (server.public_net[type]) {
    throw faults.code(422, `server_has_${type}`, `The Server already has an ${type} address`);
  }
}

/** The routes of this file. */
export function primaryIpRoutes(): SimRoute[] {
  const get = (world: World, id: string) => byId(world.primaryIps, id, "primary_ip");
  const assigneeOf = (world: World, ip: PrimaryIp) =>
    ip.assignee_id ? world.servers.get(ip.assignee_id) : undefined;
  return [
    route("GET", "/primary_ips", (req, _p, ctx) => {
      const ip = req.query.get("ip");
      return listResponse(
        [...ctx.world.primaryIps.values()],
        req,
        ctx,
        "primary_ips",
        ["id", "created"],
        (p) => ip === null || p.ip === ip,
      );
    }),
    route("GET", "/primary_ips/{id}", (_req, p, { world }) => ({
      status: 200,
      body: { primary_ip: get(world, p.id) },
    })),
    route("POST", "/primary_ips", (req, _p, { world }) => {
      const r = new BodyReader(req.body);
      const name = r.string("name", { required: true });
      const type = r.string("type", {
        required: true,
        check: (v) => v === "ipv4" || v === "ipv6" ? undefined : 'must be "ipv4" or "ipv6"',
      }) as "ipv4" | "ipv6" | undefined;
      r.string("assignee_type", {
        required: true,
        check: (v) => v === "server" ? undefined : 'must be "server"',
      });
      const assigneeId = r.int("assignee_id");
      const locationName = r.idOrName("location");
      const autoDelete = r.bool("auto_delete") ?? false;
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      const location = LOCATIONS.find((l) => l.name === locationName || String(l.id) === locationName);
      if (locationName && !location) r.fail("location", "location not found");
      if (assigneeId === undefined && !locationName) r.fail("location", "is required without an assignee");
      if (assigneeId !== undefined && locationName) {
        r.fail("location", "location and assignee_id are mutually exclusive");
      }
      r.done();
      if ([...world.primaryIps.values()].some((x) => x.name === name)) throw faults.uniqueness("name");
      const server = assigneeId === undefined ? undefined : byId(world.servers, String(assigneeId), "server");
      if (server) checkAssignable(server, type!);
      const at = server?.location ?? location!;
      const id = world.id();
      const address = world.allocatePublicIp(type!);
      const ip: PrimaryIp = {
        id,
        name: name!,
        type: type!,
        ip: address,
        assignee_id: null,
        assignee_type: "server",
        auto_delete: autoDelete,
        blocked: false,
        created: new Date(world.now()).toISOString(),
        datacenter: datacenterOf(at.name),
        location: at,
        dns_ptr: [],
        labels: labels ?? {},
        protection: { delete: false },
      };
      world.primaryIps.set(id, ip);
      if (server) attach(server, ip);
      const action = world.startAction("create_primary_ip", [{ id, type: "primary_ip" }]);
      return { status: 201, body: { primary_ip: ip, action } };
    }),
    route("PUT", "/primary_ips/{id}", (req, p, { world }) => {
      const ip = get(world, p.id);
      const r = new BodyReader(req.body);
      const name = r.string("name");
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      const autoDelete = r.bool("auto_delete");
      r.done();
      if (name && name !== ip.name && [...world.primaryIps.values()].some((x) => x.name === name)) {
        throw faults.uniqueness("name");
      }
      if (name) ip.name = name;
      if (labels) ip.labels = labels;
      if (autoDelete !== undefined) ip.auto_delete = autoDelete;
      return { status: 200, body: { primary_ip: ip } };
    }),
    route("DELETE", "/primary_ips/{id}", (_req, p, { world }) => {
      const ip = get(world, p.id);
      if (ip.protection.delete) throw faults.protectedResource();
      // Since 1 May 2026 an assigned Primary IP must be unassigned first (the API's documented rule).
      if (ip.assignee_id !== null) {
        throw faults.code(422, "must_be_unassigned", "the Primary IP is still assigned to a resource");
      }
      world.primaryIps.delete(ip.id);
      return { status: 204 };
    }),
    route("POST", "/primary_ips/{id}/actions/assign", (req, p, { world }) => {
      const ip = get(world, p.id);
      const r = new BodyReader(req.body);
      const assigneeId = r.int("assignee_id", { required: true });
      r.string("assignee_type", {
        required: true,
        check: (v) => v === "server" ? undefined : 'must be "server"',
      });
      r.done();
      const server = byId(world.servers, String(assigneeId), "server");
      if (ip.assignee_id !== null && ip.assignee_id !== server.id) {
        throw faults.code(
          422,
          "primary_ip_already_assigned",
          "Primary IP is already assigned to a different Server",
        );
      }
      checkAssignable(server, ip.type);
      attach(server, ip);
      return actionReply(world.startAction("assign_primary_ip", [{ id: ip.id, type: "primary_ip" }]));
    }),
    route("POST", "/primary_ips/{id}/actions/unassign", (_req, p, { world }) => {
      const ip = get(world, p.id);
      const server = assigneeOf(world, ip);
      if (server && server.status !== "off") {
        throw faults.code(422, "server_not_stopped", "The Server is running, but needs to be powered off");
      }
      detach(world, ip);
      return actionReply(world.startAction("unassign_primary_ip", [{ id: ip.id, type: "primary_ip" }]));
    }),
    route("POST", "/primary_ips/{id}/actions/change_protection", (req, p, { world }) => {
      const ip = get(world, p.id);
      const r = new BodyReader(req.body);
      const del = r.bool("delete");
      r.done();
      if (del !== undefined) ip.protection.delete = del;
      return actionReply(world.startAction("change_protection", [{ id: ip.id, type: "primary_ip" }], 0));
    }),
    route("POST", "/primary_ips/{id}/actions/change_dns_ptr", (req, p, { world }) => {
      const ip = get(world, p.id);
      const r = new BodyReader(req.body);
      const address = r.string("ip", { required: true });
      r.done();
      const dnsPtr = (req.body as { dns_ptr?: string | null }).dns_ptr ?? null;
      ip.dns_ptr = ip.dns_ptr.filter((d) => d.ip !== address);
      if (dnsPtr) ip.dns_ptr.push({ ip: address!, dns_ptr: dnsPtr });
      const server = assigneeOf(world, ip);
      if (server && ip.type === "ipv4" && server.public_net.ipv4) {
        server.public_net.ipv4.dns_ptr = dnsPtr ?? "";
      }
      return actionReply(world.startAction("change_dns_ptr", [{ id: ip.id, type: "primary_ip" }]));
    }),
    ...resourceActionRoutes("primary_ips", "primary_ip", (w) => w.primaryIps),
  ];
}
