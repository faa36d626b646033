/**
 * Simulated volumes, floating IPs and placement groups: create, list (names, label selectors,
 * pagination), get, update, delete and their action logs, so a client that lists everything in a
 * project works. Attaching volumes and assigning floating IPs after creation are not simulated
 * (404, as an unknown route). Firewalls are routes_firewalls.ts.
 *
 * @module
 */
import { BodyReader, faults } from "./http_kit.ts";
import { validLabels } from "../lib/label_selector.ts";
import { LOCATIONS } from "./catalog.ts";
import { byId, listResponse, route, type SimRoute } from "./router.ts";
import type { Reply } from "./http_kit.ts";
import { resourceActionRoutes } from "./routes_servers.ts";
import type { SimpleResource as Item, World } from "./world.ts";

const labelsCheck = (v: Record<string, unknown>) =>
  validLabels(v) ? undefined : "contains an invalid label key or value";

interface Kind {
  plural: string;
  /** The singular key of bodies and the resource type of actions. */
  key: string;
  map: (world: World) => Map<number, Item>;
  /** Reads the create body (problems go to `r`); returns the new item and the rest of the reply body. */
  create: (
    r: BodyReader,
    world: World,
    base: Item,
  ) => { item: Item; reply: Record<string, unknown> } | undefined;
  /** Throws the API's error when the item cannot be deleted now. */
  beforeDelete?: (item: Item) => void;
}

const location = (r: BodyReader, field: string, required: boolean) => {
  const ref = r.idOrName(field, { required });
  const found = LOCATIONS.find((l) => l.name === ref || String(l.id) === ref);
  if (ref && !found) r.fail(field, "location not found");
  return found;
};

const KINDS: Kind[] = [
  {
    plural: "volumes",
    key: "volume",
    map: (w) => w.volumes,
    create: (r, world, base) => {
      const size = r.int("size", {
        required: true,
        check: (v) => v >= 10 && v <= 10240 ? undefined : "must be 10 to 10240",
      });
      const at = location(r, "location", true);
      const format = r.string("format", {
        check: (v) => ["ext4", "xfs"].includes(v) ? undefined : 'must be "ext4" or "xfs"',
      });
      if (r.has("server")) r.fail("server", "attaching volumes is not simulated; use location");
      if (!size || !at) return undefined;
      const item = {
        ...base,
        size,
        location: at,
        format: format ?? null,
        server: null,
        status: "available",
        linux_device: `/dev/disk/by-id/scsi-0HC_Volume_${base.id}`,
        protection: { delete: false },
      };
      const action = world.startAction("create_volume", [{ id: base.id, type: "volume" }]);
      return { item, reply: { action, next_actions: [] } };
    },
  },
  {
    plural: "floating_ips",
    key: "floating_ip",
    map: (w) => w.floatingIps,
    create: (r, world, base) => {
      const type = r.string("type", {
        required: true,
        check: (v) => v === "ipv4" || v === "ipv6" ? undefined : 'must be "ipv4" or "ipv6"',
      }) as "ipv4" | "ipv6" | undefined;
      const at = location(r, "home_location", true);
      const description = r.string("description");
      if (r.has("server")) r.fail("server", "assigning floating IPs is not simulated; use home_location");
      if (!type || !at) return undefined;
      const ip = world.allocatePublicIp(type);
      const item = {
        ...base,
        type,
        ip,
        home_location: at,
        description: description ?? null,
        server: null,
        blocked: false,
        dns_ptr: type === "ipv4"
          ? [{ ip, dns_ptr: `static.${ip.split(".").reverse().join(".")}.clients.your-server.de` }]
          : [],
        protection: { delete: false },
      };
      return { item, reply: {} };
    },
  },
  {
    plural: "placement_groups",
    key: "placement_group",
    map: (w) => w.placementGroups,
    create: (r, _world, base) => {
      const type = r.string("type", {
        required: true,
        check: (v) => v === "spread" ? undefined : 'must be "spread"',
      });
      if (!type) return undefined;
      return { item: { ...base, type, servers: [] }, reply: {} };
    },
  },
];

/** The routes of this file. */
export function moreResourceRoutes(): SimRoute[] {
  return KINDS.flatMap((kind) => {
    const get = (world: World, id: string) => byId(kind.map(world), id, kind.key);
    return [
      route(
        "GET",
        `/${kind.plural}`,
        (req, _p, ctx) =>
          listResponse([...kind.map(ctx.world).values()], req, ctx, kind.plural, ["id", "name", "created"]),
      ),
      route("GET", `/${kind.plural}/{id}`, (_req, p, { world }) => ({
        status: 200,
        body: { [kind.key]: get(world, p.id) },
      })),
      route("POST", `/${kind.plural}`, (req, _p, { world }): Reply => {
        const r = new BodyReader(req.body);
        const name = r.string("name", { required: kind.key !== "floating_ip" });
        const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
        const id = world.id();
        const base: Item = {
          id,
          name: name ?? `${kind.key.replace("_", "-")}-${id}`,
          labels: labels ?? {},
          created: new Date(world.now()).toISOString(),
        };
        if ([...kind.map(world).values()].some((x) => x.name === base.name)) {
          r.fail("name", "is already used");
        }
        const made = kind.create(r, world, base);
        r.done();
        kind.map(world).set(id, made!.item);
        return { status: 201, body: { [kind.key]: made!.item, ...made!.reply } };
      }),
      route("PUT", `/${kind.plural}/{id}`, (req, p, { world }) => {
        const item = get(world, p.id);
        const r = new BodyReader(req.body);
        const name = r.string("name");
        const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
        r.done();
        if (name && name !== item.name && [...kind.map(world).values()].some((x) => x.name === name)) {
          throw faults.uniqueness("name");
        }
        if (name) item.name = name;
        if (labels) item.labels = labels;
        return { status: 200, body: { [kind.key]: item } };
      }),
      route("DELETE", `/${kind.plural}/{id}`, (_req, p, { world }) => {
        const item = get(world, p.id);
        if ((item.protection as { delete?: boolean } | undefined)?.delete) throw faults.protectedResource();
        kind.beforeDelete?.(item);
        kind.map(world).delete(item.id);
        return { status: 204 };
      }),
      ...resourceActionRoutes(kind.plural, kind.key, kind.map),
    ];
  });
}
