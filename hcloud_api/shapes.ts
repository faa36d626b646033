/**
 * Checked conversion of API objects into the small shapes the provider uses. An object with a
 * missing or mistyped field becomes a {@link CloudApiError} `invalid_response` naming the field,
 * never a crash further in.
 *
 * @module
 */
import { CloudApiError } from "./errors.ts";

/** What the provider needs of a server. */
export interface ServerInfo {
  /** The server's ID (`hcloud://<id>` on its Node). */
  id: number;
  /** Its name (what Nodes are matched by, as the official CCM does). */
  name: string;
  /** `running`, `off`, `initializing`, …, as the API says. */
  status: string;
  /** The server type's name (`cx22`): the Node's instance type. */
  serverType: string;
  /** The location's name (`fsn1`): the Node's zone. */
  location: string;
  /** The location's network zone (`eu-central`): the Node's region. */
  networkZone: string;
  /** The public IPv4 address, if it has one. */
  ipv4?: string;
  /** The IPv6 network, e.g. `2001:db8::/64`. */
  ipv6Net?: string;
  /** Its addresses in private networks, by network ID. */
  privateNets: { network: number; ip: string }[];
  /** Its labels in the cloud. */
  labels: Record<string, string>;
  /** IDs of the Primary IPs on the public interface (to follow their assign/unassign actions). */
  primaryIpIds: number[];
}

/** What the provider needs of a network. */
export interface NetworkInfo {
  /** The network's ID. */
  id: number;
  /** Its name (what `HCLOUD_NETWORK` may name). */
  name: string;
  /** Its whole range (`10.0.0.0/8`). */
  ipRange: string;
  /** Its routes: a destination range through a gateway address. */
  routes: { destination: string; gateway: string }[];
  /** The IDs of the servers attached to it, as the API answered now. */
  servers: number[];
}

type Obj = Record<string, unknown>;

function bad(what: string, field: string): never {
  throw new CloudApiError(`unexpected API response: ${what} has no valid "${field}"`, {
    status: 200,
    code: "invalid_response",
  });
}

function obj(v: unknown, what: string, field: string): Obj {
  if (!v || typeof v !== "object" || Array.isArray(v)) bad(what, field);
  return v as Obj;
}

function str(o: Obj, field: string, what: string): string {
  const v = o[field];
  return typeof v === "string" ? v : bad(what, field);
}

function num(o: Obj, field: string, what: string): number {
  const v = o[field];
  return typeof v === "number" && Number.isFinite(v) ? v : bad(what, field);
}

/** Converts a raw server object. */
export function toServerInfo(raw: unknown): ServerInfo {
  const s = obj(raw, "server", "(object)");
  const id = num(s, "id", "server");
  const what = `server ${id}`;
  const name = str(s, "name", what);
  const location = obj(s.location, what, "location");
  const publicNet = s.public_net === undefined || s.public_net === null
    ? {}
    : obj(s.public_net, what, "public_net");
  const ipv4 = publicNet.ipv4 ? str(obj(publicNet.ipv4, what, "public_net.ipv4"), "ip", what) : undefined;
  const ipv6 = publicNet.ipv6 ? str(obj(publicNet.ipv6, what, "public_net.ipv6"), "ip", what) : undefined;
  const privateNet = Array.isArray(s.private_net)
    ? s.private_net
    : s.private_net == null
    ? []
    : bad(what, "private_net");
  return {
    id,
    name,
    status: str(s, "status", what),
    serverType: str(obj(s.server_type, what, "server_type"), "name", what),
    location: str(location, "name", what),
    networkZone: typeof location.network_zone === "string" ? location.network_zone : "",
    ipv4,
    ipv6Net: ipv6,
    privateNets: privateNet
      .map((p) => obj(p, what, "private_net[]"))
      .filter((p) => typeof p.ip === "string" && typeof p.network === "number")
      .map((p) => ({ network: p.network as number, ip: p.ip as string })),
    labels: s.labels && typeof s.labels === "object" ? s.labels as Record<string, string> : {},
    primaryIpIds: [publicNet.ipv4, publicNet.ipv6]
      .map((ip) => (ip as Obj | null | undefined)?.id)
      .filter((id): id is number => typeof id === "number"),
  };
}

/** Converts a raw network object. */
export function toNetworkInfo(raw: unknown): NetworkInfo {
  const n = obj(raw, "network", "(object)");
  const id = num(n, "id", "network");
  const what = `network ${id}`;
  const routes = Array.isArray(n.routes) ? n.routes : bad(what, "routes");
  return {
    id,
    name: str(n, "name", what),
    ipRange: str(n, "ip_range", what),
    routes: routes.map((r) => {
      const o = obj(r, what, "routes[]");
      return { destination: str(o, "destination", what), gateway: str(o, "gateway", what) };
    }),
    servers: Array.isArray(n.servers) ? n.servers.filter((s): s is number => Number.isSafeInteger(s)) : [],
  };
}
