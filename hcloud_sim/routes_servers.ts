/**
 * Simulated `/servers`, `/server_types`, `/locations`, `/datacenters` and `/actions`.
 *
 * @module
 */
import { firewallsOf } from "./firewall_model.ts";
import { BodyReader, faults, paginate, type SimRequest, sortItems } from "./http_kit.ts";
import { validLabels } from "../lib/label_selector.ts";
import { DATACENTERS, LOAD_BALANCER_TYPES, LOCATIONS, SERVER_TYPES } from "./catalog.ts";
import { actionReply, byId, type HandlerContext, listResponse, route, type SimRoute } from "./router.ts";
import type { Action, Server, World } from "./world.ts";
import { findImage } from "./routes_keys_images.ts";

const STATUSES = [
  "running",
  "initializing",
  "starting",
  "stopping",
  "off",
  "deleting",
  "migrating",
  "rebuilding",
  "unknown",
];

/** The server as the API shows it now (`locked` while an action runs). */
export function renderServer(world: World, server: Server): Server {
  const shown = { ...structuredClone(server), locked: world.isLocked("server", server.id) };
  shown.public_net.firewalls = firewallsOf(world, server.id).map((fw) => ({ id: fw.id, status: "applied" }));
  return shown;
}

/** The action command the API records for each power route. */
const POWER_COMMANDS: Record<string, string> = {
  poweron: "start_server",
  poweroff: "stop_server",
  shutdown: "shutdown_server",
  reboot: "reboot_server",
  reset: "reset_server",
};

const labelsCheck = (v: Record<string, unknown>) =>
  validLabels(v) ? undefined : "contains an invalid label key or value";

/** The routes of this file. */
export function serverRoutes(): SimRoute[] {
  const get = (world: World, id: string) => byId(world.servers, id, "server");
  const power = (command: string, status: Server["status"]) =>
    route("POST", `/servers/{id}/actions/${command}`, (_req, p, { world }) => {
      const server = get(world, p.id);
      world.assertUnlocked("server", server.id);
      server.status = status;
      return actionReply(world.startAction(POWER_COMMANDS[command], [{ id: server.id, type: "server" }]));
    });
  return [
    route("GET", "/servers", (req, _p, ctx) => {
      const statuses = req.query.getAll("status");
      for (const s of statuses) {
        if (!STATUSES.includes(s)) throw faults.invalid({ status: [`invalid status "${s}"`] });
      }
      // Filtered and sorted as stored (rendering adds no field they read); only the page is rendered.
      return listResponse(
        [...ctx.world.servers.values()],
        req,
        ctx,
        "servers",
        undefined,
        (s) => statuses.length === 0 || statuses.includes(s.status),
        (s) => renderServer(ctx.world, s),
      );
    }),
    route("POST", "/servers", (req, _p, { world }) => {
      const r = new BodyReader(req.body);
      const name = r.string("name", {
        required: true,
        check: (v) =>
          /^[a-zA-Z0-9]([a-zA-Z0-9.-]{0,61}[a-zA-Z0-9])?$/.test(v) ? undefined : "is not a valid hostname",
      });
      const type = r.idOrName("server_type", { required: true });
      const imageRef = r.idOrName("image", { required: true });
      const locationRef = r.idOrName("location");
      const location = LOCATIONS.find((l) => String(l.id) === locationRef)?.name ?? locationRef;
      const datacenter = r.idOrName("datacenter");
      const sshKeys = r.array("ssh_keys", {
        check: (v) =>
          v.every((k) => typeof k === "string" || Number.isInteger(k))
            ? undefined
            : "must be a list of IDs or names",
      }) as (string | number)[] | undefined;
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      const networks = r.array("networks", {
        check: (v) => v.every(Number.isInteger) ? undefined : "must be a list of network IDs",
      }) as number[] | undefined;
      const publicNet = r.object("public_net");
      if (location && datacenter) {
        r.fail("datacenter", "location and datacenter are mutually exclusive");
        r.fail("location", "location and datacenter are mutually exclusive");
      }
      const serverType = SERVER_TYPES.find((t) => t.name === type || String(t.id) === type);
      if (type && !serverType) r.fail("server_type", "server type not found");
      const image = imageRef ? findImage(imageRef, serverType?.architecture) : undefined;
      if (imageRef && !image) r.fail("image", "image not found");
      if (image && serverType && image.architecture !== serverType.architecture) {
        r.fail("image", `image is for ${image.architecture}, the server type for ${serverType.architecture}`);
      }
      for (const k of sshKeys ?? []) {
        if (![...world.sshKeys.values()].some((key) => key.id === k || key.name === k)) {
          r.fail("ssh_keys", `ssh key ${k} not found`);
        }
      }
      const loc = location ?? DATACENTERS.find((d) => d.name === datacenter)?.location.name;
      if (location && !LOCATIONS.some((l) => l.name === location)) r.fail("location", "location not found");
      if (datacenter && !loc) r.fail("datacenter", "datacenter not found");
      for (const n of networks ?? []) {
        if (!world.networks.has(n)) r.fail("networks", `network ${n} not found`);
      }
      r.done();
      const server = world.addServer({
        name: name!,
        server_type: SERVER_TYPES.find((t) => t.name === type || String(t.id) === type)!.name,
        location: loc,
        labels,
        status: "initializing",
        ipv4: publicNet?.enable_ipv4 === false ? false : undefined,
        ipv6: publicNet?.enable_ipv6 === false ? false : undefined,
        private_net: (networks ?? []).map((network) => ({ network })),
      });
      server.image = structuredClone(image!) as Server["image"];
      const action = world.startAction("create_server", [{ id: server.id, type: "server" }]);
      server.status = req.body && (req.body as { start_after_create?: boolean }).start_after_create === false
        ? "off"
        : "running";
      return {
        status: 201,
        body: { server: renderServer(world, server), action, next_actions: [], root_password: null },
      };
    }),
    route(
      "GET",
      "/servers/{id}",
      (_req, p, { world }) => ({ status: 200, body: { server: renderServer(world, get(world, p.id)) } }),
    ),
    route("PUT", "/servers/{id}", (req, p, { world }) => {
      const server = get(world, p.id);
      const r = new BodyReader(req.body);
      const name = r.string("name");
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      r.done();
      if (name && name !== server.name && [...world.servers.values()].some((s) => s.name === name)) {
        throw faults.uniqueness("name");
      }
      if (name) server.name = name;
      if (labels) server.labels = labels;
      return { status: 200, body: { server: renderServer(world, server) } };
    }),
    route("DELETE", "/servers/{id}", (_req, p, { world }) => {
      const server = get(world, p.id);
      if (server.protection.delete) throw faults.protectedResource();
      world.assertUnlocked("server", server.id);
      return { status: 200, body: { action: world.removeServer(server) } };
    }),
    power("poweron", "running"),
    power("poweroff", "off"),
    power("shutdown", "off"),
    power("reboot", "running"),
    power("reset", "running"),
    route("POST", "/servers/{id}/actions/attach_to_network", (req, p, { world }) => {
      const server = get(world, p.id);
      const r = new BodyReader(req.body);
      const networkId = r.int("network", { required: true });
      const ip = r.string("ip");
      r.done();
      const network = byId(world.networks, String(networkId), "network");
      world.assertUnlocked("server", server.id);
      world.attachServer(server, network, ip);
      return actionReply(
        world.startAction("attach_to_network", [{ id: server.id, type: "server" }, {
          id: network.id,
          type: "network",
        }]),
      );
    }),
    route("POST", "/servers/{id}/actions/detach_from_network", (req, p, { world }) => {
      const server = get(world, p.id);
      const r = new BodyReader(req.body);
      const networkId = r.int("network", { required: true });
      r.done();
      const network = byId(world.networks, String(networkId), "network");
      if (!server.private_net.some((pn) => pn.network === network.id)) {
        throw faults.code(422, "server_not_attached_to_network", "server is not attached to this network");
      }
      world.assertUnlocked("server", server.id);
      world.detachServer(server, network);
      return actionReply(
        world.startAction("detach_from_network", [{ id: server.id, type: "server" }, {
          id: network.id,
          type: "network",
        }]),
      );
    }),
    route("POST", "/servers/{id}/actions/change_type", (req, p, { world }) => {
      const server = get(world, p.id);
      const r = new BodyReader(req.body);
      const type = r.idOrName("server_type", { required: true });
      r.bool("upgrade_disk", { required: true });
      r.done();
      const found = SERVER_TYPES.find((t) => t.name === type || String(t.id) === type);
      if (!found) throw faults.invalid({ server_type: ["server type not found"] });
      world.assertUnlocked("server", server.id);
      if (server.status !== "off") {
        throw faults.code(422, "server_not_stopped", "server must be stopped to change its type");
      }
      server.server_type = found;
      return actionReply(world.startAction("change_server_type", [{ id: server.id, type: "server" }]));
    }),
    route("POST", "/servers/{id}/actions/change_alias_ips", (req, p, { world }) => {
      const server = get(world, p.id);
      const r = new BodyReader(req.body);
      const networkId = r.int("network", { required: true });
      const aliases = r.array("alias_ips", {
        required: true,
        check: (v) => v.every((x) => typeof x === "string") ? undefined : "must be a list of IPs",
      }) as string[] | undefined;
      r.done();
      const network = byId(world.networks, String(networkId), "network");
      const attachment = server.private_net.find((pn) => pn.network === network.id);
      if (!attachment) {
        throw faults.code(422, "server_not_attached_to_network", "server is not attached to this network");
      }
      world.assertUnlocked("server", server.id);
      attachment.alias_ips = aliases ?? [];
      return actionReply(
        world.startAction("change_alias_ips", [{ id: server.id, type: "server" }, {
          id: network.id,
          type: "network",
        }]),
      );
    }),
    route("POST", "/servers/{id}/actions/change_protection", (req, p, { world }) => {
      const server = get(world, p.id);
      const r = new BodyReader(req.body);
      const del = r.bool("delete");
      const rebuild = r.bool("rebuild");
      r.done();
      if (del !== undefined) server.protection.delete = del;
      if (rebuild !== undefined) server.protection.rebuild = rebuild;
      return actionReply(world.startAction("change_protection", [{ id: server.id, type: "server" }], 0));
    }),
    route("POST", "/servers/{id}/actions/change_dns_ptr", (req, p, { world }) => {
      const server = get(world, p.id);
      const r = new BodyReader(req.body);
      const ip = r.string("ip", { required: true });
      r.done();
      const dnsPtr = (req.body as { dns_ptr?: string | null }).dns_ptr ?? null;
      const ipv4 = server.public_net.ipv4;
      if (ipv4 && ipv4.ip === ip) ipv4.dns_ptr = dnsPtr ?? "";
      else if (server.public_net.ipv6) {
        const list = (server.public_net.ipv6.dns_ptr ?? []).filter((d) => d.ip !== ip);
        if (dnsPtr) list.push({ ip: ip!, dns_ptr: dnsPtr });
        server.public_net.ipv6.dns_ptr = list;
      } else throw faults.invalid({ ip: ["IP does not belong to this server"] });
      return actionReply(world.startAction("change_dns_ptr", [{ id: server.id, type: "server" }]));
    }),
    ...resourceActionRoutes("servers", "server", (w) => w.servers),
    ...catalogRoutes(),
    route("GET", "/actions", (req, _p, { world }) => {
      const ids = req.query.getAll("id");
      // Listing every action was removed in 2025; `id` is required now.
      if (ids.length === 0) throw faults.invalid({ id: ["is required"] });
      const actions = ids.map((id) => world.getAction(Number(id))).filter((a) => a !== undefined);
      return {
        status: 200,
        body: {
          actions,
          meta: {
            pagination: {
              page: 1,
              per_page: actions.length,
              previous_page: null,
              next_page: null,
              last_page: 1,
              total_entries: actions.length,
            },
          },
        },
      };
    }),
    route("GET", "/actions/{id}", (_req, p, { world }) => {
      const action = world.getAction(Number(p.id));
      if (!action) throw faults.notFound("action");
      return { status: 200, body: { action } };
    }),
  ];
}

const ACTION_STATUSES = ["running", "success", "error"];
const ACTION_SORT_FIELDS = ["id", "command", "status", "started", "finished"];

/** `/{plural}/actions`, `/{plural}/actions/{id}`, `/{plural}/{id}/actions`, `/{plural}/{id}/actions/{action_id}`. */
export function resourceActionRoutes(
  plural: string,
  type: string,
  map: (w: World) => Map<number, unknown>,
): SimRoute[] {
  const list = (actions: Action[], req: SimRequest, ctx: HandlerContext) => {
    const ids = req.query.getAll("id").map(Number);
    const statuses = req.query.getAll("status");
    for (const s of statuses) {
      if (!ACTION_STATUSES.includes(s)) throw faults.invalid({ status: [`invalid status "${s}"`] });
    }
    const filtered = actions.filter((a) =>
      (ids.length === 0 || ids.includes(a.id)) && (statuses.length === 0 || statuses.includes(a.status))
    );
    return paginate(
      sortItems(filtered as unknown as Record<string, unknown>[], req, ACTION_SORT_FIELDS),
      req,
      ctx.baseUrl,
      "actions",
    );
  };
  const one = (
    world: World,
    id: string,
    filter: (a: { resources: { type: string; id: number }[] }) => boolean,
  ) => {
    const action = world.getAction(Number(id));
    if (!action || !filter(action)) throw faults.notFound("action");
    return { status: 200, body: { action } };
  };
  return [
    route("GET", `/${plural}/actions`, (req, _p, ctx) => list(ctx.world.actionsOfType(type), req, ctx)),
    route(
      "GET",
      `/${plural}/actions/{id}`,
      (_req, p, { world }) => one(world, p.id, (a) => a.resources.some((r) => r.type === type)),
    ),
    route("GET", `/${plural}/{id}/actions`, (req, p, ctx) => {
      byId(map(ctx.world), p.id, type.replace("_", " "));
      return list(ctx.world.actionsOf(type, Number(p.id)), req, ctx);
    }),
    route(
      "GET",
      `/${plural}/{id}/actions/{action_id}`,
      (_req, p, { world }) =>
        one(world, p.action_id, (a) => a.resources.some((r) => r.type === type && r.id === Number(p.id))),
    ),
  ];
}

function catalogRoutes(): SimRoute[] {
  const catalog = (
    plural: string,
    items: { id: number; name: string }[],
    key: string,
    what: string,
    extra: Record<string, unknown> = {},
  ) => [
    route("GET", `/${plural}`, (req, _p, ctx) => {
      const reply = listResponse(items, req, ctx, key, ["id", "name"]);
      Object.assign(reply.body as object, extra);
      return reply;
    }),
    route("GET", `/${plural}/{id}`, (_req, p) => {
      const item = items.find((i) => String(i.id) === p.id);
      if (!item) throw faults.notFound(what);
      return { status: 200, body: { [what.replace(/ /g, "_")]: item } };
    }),
  ];
  return [
    ...catalog("server_types", SERVER_TYPES, "server_types", "server type"),
    ...catalog("locations", LOCATIONS, "locations", "location"),
    ...catalog("datacenters", DATACENTERS, "datacenters", "datacenter", {
      recommendation: DATACENTERS[0].id,
    }),
    ...catalog("load_balancer_types", LOAD_BALANCER_TYPES, "load_balancer_types", "load balancer type"),
  ];
}
