/**
 * Simulated `/ssh_keys`, `/images` (Hetzner's system images) and `/pricing`: what every client needs
 * before it can create a server.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { BodyReader, faults } from "./http_kit.ts";
import { validLabels } from "../lib/label_selector.ts";
import { LOAD_BALANCER_TYPES, LOCATIONS, SERVER_TYPES } from "./catalog.ts";
import { byId, listResponse, route, type SimRoute } from "./router.ts";
import type { components } from "../hcloud_api/mod.ts";
import type { SshKey, World } from "./world.ts";

type S = components["schemas"];
/** An image as the API shows it. */
export type Image = S["image"];

const labelsCheck = (v: Record<string, unknown>) =>
  validLabels(v) ? undefined : "contains an invalid label key or value";

const KEY =
  /^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com) ([A-Za-z0-9+/]+={0,2})( .*)?$/;

/** The MD5 fingerprint the API shows (`aa:bb:...`), or undefined for a malformed key. */
export function fingerprintOf(publicKey: string): string | undefined {
  const m = publicKey.trim().match(KEY);
  if (!m) return undefined;
  const hex = createHash("md5").update(Uint8Array.from(atob(m[4]), (c) => c.charCodeAt(0))).digest("hex");
  return hex.match(/../g)!.join(":");
}

/** Hetzner's system images (IDs as the public API has them), one per architecture. */
export const IMAGES: Image[] = [
  ["ubuntu-22.04", "ubuntu", "22.04", 67794396, 103908070],
  ["ubuntu-24.04", "ubuntu", "24.04", 161547269, 161547270],
  ["debian-12", "debian", "12", 114690387, 114690389],
  ["debian-13", "debian", "13", 310557660, 310557661],
].flatMap(([name, flavor, version, x86, arm]) =>
  (["x86", "arm"] as const).map((architecture) => ({
    id: (architecture === "x86" ? x86 : arm) as number,
    name: name as string,
    description: `${flavor === "ubuntu" ? "Ubuntu" : "Debian"} ${version}`,
    type: "system" as const,
    status: "available" as const,
    architecture,
    os_flavor: flavor as Image["os_flavor"],
    os_version: version as string,
    rapid_deploy: true,
    image_size: null,
    disk_size: 5,
    created: "2024-04-25T12:00:00Z",
    created_from: null,
    bound_to: null,
    deleted: null,
    deprecated: null,
    labels: {},
    protection: { delete: false },
  }))
);

/** The image with this ID or name (for `POST /servers`), x86 first for a bare name. */
export function findImage(idOrName: string, architecture = "x86"): Image | undefined {
  return IMAGES.find((i) => String(i.id) === idOrName) ??
    IMAGES.find((i) => i.name === idOrName && i.architecture === architecture);
}

/** The routes of this file. */
export function keyAndImageRoutes(): SimRoute[] {
  const keys = (world: World) => world.sshKeys;
  return [
    route("GET", "/ssh_keys", (req, _p, ctx) => {
      const fingerprint = req.query.get("fingerprint");
      return listResponse(
        [...keys(ctx.world).values()],
        req,
        ctx,
        "ssh_keys",
        ["id", "name"],
        (k) => fingerprint === null || k.fingerprint === fingerprint,
      );
    }),
    route("GET", "/ssh_keys/{id}", (_req, p, { world }) => ({
      status: 200,
      body: { ssh_key: byId(keys(world), p.id, "ssh_key") },
    })),
    route("POST", "/ssh_keys", (req, _p, { world }) => {
      const r = new BodyReader(req.body);
      const name = r.string("name", { required: true });
      const publicKey = r.string("public_key", {
        required: true,
        check: (v) => fingerprintOf(v) ? undefined : "is not a valid SSH public key",
      });
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      r.done();
      const fingerprint = fingerprintOf(publicKey!)!;
      for (const k of keys(world).values()) {
        if (k.name === name) throw faults.uniqueness("name");
        if (k.fingerprint === fingerprint) throw faults.uniqueness("public_key");
      }
      const key: SshKey = {
        id: world.id(),
        name: name!,
        public_key: publicKey!.trim(),
        fingerprint,
        labels: labels ?? {},
        created: new Date(world.now()).toISOString(),
      };
      keys(world).set(key.id, key);
      return { status: 201, body: { ssh_key: key } };
    }),
    route("PUT", "/ssh_keys/{id}", (req, p, { world }) => {
      const key = byId(keys(world), p.id, "ssh_key");
      const r = new BodyReader(req.body);
      const name = r.string("name");
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      r.done();
      if (name && name !== key.name && [...keys(world).values()].some((k) => k.name === name)) {
        throw faults.uniqueness("name");
      }
      if (name) key.name = name;
      if (labels) key.labels = labels;
      return { status: 200, body: { ssh_key: key } };
    }),
    route("DELETE", "/ssh_keys/{id}", (_req, p, { world }) => {
      keys(world).delete(byId(keys(world), p.id, "ssh_key").id);
      return { status: 204 };
    }),
    route("GET", "/images", (req, _p, ctx) => {
      const types = req.query.getAll("type");
      const architecture = req.query.get("architecture");
      const statuses = req.query.getAll("status");
      return listResponse(
        IMAGES as (Image & { name: string })[],
        req,
        ctx,
        "images",
        ["id", "name", "created"],
        (i) =>
          (types.length === 0 || types.includes(i.type)) &&
          (architecture === null || i.architecture === architecture) &&
          (statuses.length === 0 || statuses.includes(i.status)),
      );
    }),
    route("GET", "/images/{id}", (_req, p) => {
      const image = IMAGES.find((i) => String(i.id) === p.id);
      if (!image) throw faults.notFound("image");
      return { status: 200, body: { image } };
    }),
    route("GET", "/pricing", () => ({ status: 200, body: { pricing: pricing() } })),
  ];
}

function pricing() {
  const money = (net: number) => ({ net: net.toFixed(4), gross: (net * 1.19).toFixed(4) });
  const perLocation = (hourly: number) =>
    LOCATIONS.map((l) => ({
      location: l.name,
      price_hourly: money(hourly),
      price_monthly: money(hourly * 720),
      included_traffic: 21990232555520,
      price_per_tb_traffic: money(1),
    }));
  const ips = (type: "ipv4" | "ipv6", monthly: number) => ({
    type,
    prices: LOCATIONS.map((l) => ({
      location: l.name,
      price_hourly: money(monthly / 720),
      price_monthly: money(monthly),
    })),
  });
  return {
    currency: "EUR",
    vat_rate: "19.00",
    image: { price_per_gb_month: money(0.011) },
    volume: { price_per_gb_month: money(0.044) },
    server_backup: { percentage: "20.00" },
    floating_ip: { price_monthly: money(3) },
    floating_ips: [ips("ipv4", 3), ips("ipv6", 1)].map(({ type, prices }) => ({
      type,
      prices: prices.map((p) => ({ location: p.location, price_monthly: p.price_monthly })),
    })),
    primary_ips: [ips("ipv4", 0.5), ips("ipv6", 0)],
    server_types: SERVER_TYPES.map((t) => ({ id: t.id, name: t.name, prices: perLocation(0.006 * t.cores) })),
    load_balancer_types: LOAD_BALANCER_TYPES.map((t) => ({
      id: t.id,
      name: t.name,
      prices: perLocation(0.008 * t.id),
    })),
  };
}
