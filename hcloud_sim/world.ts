/**
 * The simulator's state: resources in the API's own shapes, actions that run for a configurable
 * time and lock their resources meanwhile, and address allocation.
 *
 * @module
 */
import type { components } from "../hcloud_api/mod.ts";
import { datacenterOf, LOCATIONS, SERVER_TYPES } from "./catalog.ts";
import { ApiFault, faults } from "./http_kit.ts";
import { cidrContains, formatIp, lastAddress, parseCidr, parseIp } from "../lib/cidr.ts";

type S = components["schemas"];
/** API object types. */
export type Server = S["server"];
export type Network = S["network"];
export type LoadBalancer = S["load_balancer"];
/** The time series of a balancer's metrics, by the API's names. */
export type LbMetricSeries =
  | "open_connections"
  | "connections_per_second"
  | "requests_per_second"
  | "bandwidth.in"
  | "bandwidth.out";
export type Action = S["action"];
export type Certificate = S["certificate"];
export type PrimaryIp = S["get_primary_ip_response"]["primary_ip"];
export type SshKey = S["ssh_key"];
/** A resource the simulator only creates, lists, updates and deletes. */
export type SimpleResource = {
  id: number;
  name: string;
  labels: Record<string, string>;
  [field: string]: unknown;
};

/** An action and when it ends. */
interface ActionRecord {
  action: Action;
  endsAt: number;
  error?: { code: string; message: string };
}

/** Options to create a server outside the API (seeding, control API). */
export interface ServerSeed {
  name: string;
  server_type?: string;
  location?: string;
  labels?: Record<string, string>;
  status?: Server["status"];
  /** false: no public IPv4; a string: that address. */
  ipv4?: boolean | string;
  ipv6?: boolean | string;
  /** Networks (name or id) to attach, optionally with a fixed IP. */
  private_net?: { network: string | number; ip?: string }[];
  id?: number;
}

/** All resources of one simulated project. */
/** Routes one Network holds (Hetzner's documented limit). */
export const NETWORK_ROUTE_LIMIT = 100;
/** Servers one Network holds (Hetzner's documented limit). */
export const NETWORK_SERVER_LIMIT = 100;

export class World {
  readonly servers = new Map<number, Server>();
  readonly networks = new Map<number, Network>();
  readonly loadBalancers = new Map<number, LoadBalancer>();
  readonly certificates = new Map<number, Certificate>();
  readonly primaryIps = new Map<number, PrimaryIp>();
  readonly sshKeys = new Map<number, SshKey>();
  /** Firewalls, volumes, floating IPs and placement groups (see routes_more_resources.ts). */
  readonly firewalls = new Map<number, SimpleResource>();
  readonly volumes = new Map<number, SimpleResource>();
  readonly floatingIps = new Map<number, SimpleResource>();
  readonly placementGroups = new Map<number, SimpleResource>();
  /**
   * Health check results: set by a test (`<lb id>:<server id>`) or by the data path per port
   * (`<lb id>:<server id>:<listen port>`); a target not named is healthy.
   */
  readonly targetHealth = new Map<string, "healthy" | "unhealthy" | "unknown">();
  /**
   * A balancer's traffic as `GET /load_balancers/{id}/metrics` reports it (set by a test, by balancer
   * ID); a balancer not named reports zeros.
   */
  readonly lbTraffic = new Map<number, Partial<Record<LbMetricSeries, number>>>();
  readonly #actions = new Map<number, ActionRecord>();
  readonly #locks = new Map<string, number>();
  #nextId = 1;
  #ipv4 = 0;
  #ipv6 = 0;
  /** How long actions run before they succeed. */
  actionDurationMs = 1_000;
  /**
   * What one Network holds: 100 routes and 100 servers, as Hetzner documents it to users (HCCM #342,
   * kube-hetzner #1477); the API spec states neither. Beyond them: `403 resource_limit_exceeded`.
   */
  networkLimits = { routes: NETWORK_ROUTE_LIMIT, servers: NETWORK_SERVER_LIMIT };
  /** Fraction of actions that end in `error`, and a count of upcoming ones that must. */
  actionFailure = { rate: 0, next: 0 };
  /** Actions made to fail so far (by either knob). */
  failedActions = 0;
  now: () => number = Date.now;
  /** Where the world's random faults come from (a test seeds it to replay a run). */
  random: () => number = Math.random;

  /** A fresh ID (unique across resource kinds, which Hetzner does not promise but allows). */
  id(): number {
    return this.#nextId++;
  }

  /** Raises the ID counter past `id` (seeding with fixed IDs). */
  reserveId(id: number): void {
    this.#nextId = Math.max(this.#nextId, id + 1);
  }

  /** Starts an action on `resources`, locking them until it ends. */
  startAction(
    command: string,
    resources: { id: number; type: string }[],
    durationMs = this.actionDurationMs,
  ): Action {
    const now = this.now();
    const id = this.id();
    let error: ActionRecord["error"];
    if (
      this.actionFailure.next > 0 || (this.actionFailure.rate > 0 && this.random() < this.actionFailure.rate)
    ) {
      if (this.actionFailure.next > 0) this.actionFailure.next--;
      this.failedActions++;
      error = { code: "action_failed", message: `${command} failed (injected)` };
    }
    const action: Action = {
      id,
      command,
      status: "running",
      progress: 0,
      started: new Date(now).toISOString(),
      finished: null,
      resources,
      error: null,
    };
    this.#actions.set(id, { action, endsAt: now + durationMs, error });
    for (const r of resources) this.#locks.set(`${r.type}:${r.id}`, id);
    return this.#settle(this.#actions.get(id)!);
  }

  /** The current view of an action. */
  getAction(id: number): Action | undefined {
    const rec = this.#actions.get(id);
    return rec && this.#settle(rec);
  }

  /** Every action touching the resource (for `/{resource}/{id}/actions`). */
  actionsOf(type: string, id: number): Action[] {
    return [...this.#actions.values()]
      .filter((r) => r.action.resources.some((x) => x.type === type && x.id === id))
      .map((r) => this.#settle(r));
  }

  /** Every action (for `/{resource}/actions`), filtered by resource type. */
  actionsOfType(type: string): Action[] {
    return [...this.#actions.values()].filter((r) => r.action.resources.some((x) => x.type === type)).map((
      r,
    ) => this.#settle(r));
  }

  /** True while an action on this resource runs. */
  isLocked(type: string, id: number): boolean {
    const actionId = this.#locks.get(`${type}:${id}`);
    if (actionId === undefined) return false;
    const action = this.getAction(actionId);
    if (action?.status === "running") return true;
    this.#locks.delete(`${type}:${id}`);
    return false;
  }

  /** Throws 423 `locked` (or 409 `conflict` for networks, as the docs say) while an action runs. */
  assertUnlocked(type: string, id: number): void {
    if (this.isLocked(type, id)) throw type === "network" ? faults.conflict() : faults.locked();
  }

  #settle(rec: ActionRecord): Action {
    const a = rec.action;
    if (a.status === "running") {
      const now = this.now();
      if (now >= rec.endsAt) {
        a.status = rec.error ? "error" : "success";
        a.progress = 100;
        a.finished = new Date(rec.endsAt).toISOString();
        a.error = rec.error ?? null;
      } else {
        const total = Math.max(1, rec.endsAt - Date.parse(a.started));
        a.progress = Math.min(99, Math.floor(((now - Date.parse(a.started)) / total) * 100));
      }
    }
    return structuredClone(a);
  }

  /** Creates a server directly (seeding and the control API). */
  addServer(seed: ServerSeed): Server {
    const type = SERVER_TYPES.find((t) => t.name === (seed.server_type ?? "cx22"));
    const location = LOCATIONS.find((l) => l.name === (seed.location ?? "fsn1"));
    if (!type) throw faults.invalid({ server_type: [`unknown server type "${seed.server_type}"`] });
    if (!location) throw faults.invalid({ location: [`unknown location "${seed.location}"`] });
    if ([...this.servers.values()].some((s) => s.name === seed.name)) throw faults.uniqueness("name");
    const id = seed.id ?? this.id();
    this.reserveId(id);
    const ipv4 = seed.ipv4 === false ? null : typeof seed.ipv4 === "string" ? seed.ipv4 : this.#nextIpv4();
    const ipv6 = seed.ipv6 === false ? null : typeof seed.ipv6 === "string" ? seed.ipv6 : this.#nextIpv6();
    const server: Server = {
      id,
      name: seed.name,
      status: seed.status ?? "running",
      created: new Date(this.now()).toISOString(),
      labels: seed.labels ?? {},
      locked: false,
      protection: { delete: false, rebuild: false },
      server_type: type,
      location,
      datacenter: datacenterOf(location.name),
      public_net: {
        ipv4: ipv4
          ? {
            id: this.id(),
            ip: ipv4,
            blocked: false,
            dns_ptr: `static.${ipv4.split(".").reverse().join(".")}.clients.your-server.de`,
          }
          : null,
        ipv6: ipv6 ? { id: this.id(), ip: ipv6, blocked: false, dns_ptr: [] } : null,
        floating_ips: [],
        firewalls: [],
      },
      private_net: [],
      image: null,
      iso: null,
      rescue_enabled: false,
      backup_window: null,
      primary_disk_size: type.disk,
      included_traffic: 21990232555520,
      ingoing_traffic: 0,
      outgoing_traffic: 0,
      load_balancers: [],
      volumes: [],
      placement_group: null,
    };
    // A full network refuses the server before anything is made.
    for (const attach of seed.private_net ?? []) {
      const network = this.findNetwork(attach.network);
      if (network && network.servers.length >= this.networkLimits.servers) {
        throw faults.code(
          403,
          "resource_limit_exceeded",
          `network ${network.name} already holds ${this.networkLimits.servers} servers, its limit`,
        );
      }
    }
    this.servers.set(id, server);
    // Public addresses are Primary IPs, created with the server and deleted with it.
    for (const [type, net] of [["ipv4", server.public_net.ipv4], ["ipv6", server.public_net.ipv6]] as const) {
      if (!net) continue;
      this.primaryIps.set(net.id!, {
        id: net.id!,
        name: `primary_ip-${net.id}`,
        type,
        ip: net.ip!,
        assignee_id: id,
        assignee_type: "server",
        auto_delete: true,
        blocked: false,
        created: server.created,
        datacenter: server.datacenter,
        location: server.location,
        dns_ptr: type === "ipv4" ? [{ ip: net.ip!, dns_ptr: String(net.dns_ptr) }] : [],
        labels: {},
        protection: { delete: false },
      });
    }
    for (const attach of seed.private_net ?? []) {
      const network = this.findNetwork(attach.network);
      if (!network) throw faults.invalid({ private_net: [`unknown network "${attach.network}"`] });
      this.attachServer(server, network, attach.ip);
    }
    return server;
  }

  /** The network with this ID or name. */
  findNetwork(idOrName: string | number): Network | undefined {
    const id = Number(idOrName);
    if (Number.isInteger(id) && this.networks.has(id)) return this.networks.get(id);
    return [...this.networks.values()].find((n) => n.name === String(idOrName));
  }

  /** Attaches a server to a network with a fixed or the next free IP of the zone's subnet. */
  attachServer(server: Server, network: Network, ip?: string): string {
    if (server.private_net.some((p) => p.network === network.id)) {
      throw faults.code(422, "server_already_attached", "server is already attached to this network");
    }
    if (network.servers.length >= this.networkLimits.servers) {
      throw faults.code(
        403,
        "resource_limit_exceeded",
        `network ${network.name} already holds ${this.networkLimits.servers} servers, its limit`,
      );
    }
    const chosen = this.allocatePrivateIp(network, server.location.network_zone, ip);
    server.private_net.push({
      network: network.id,
      ip: chosen,
      alias_ips: [],
      mac_address: macOf(server.id, network.id),
    });
    network.servers.push(server.id);
    return chosen;
  }

  /**
   * Deletes a server as the API does: off its networks, its auto-delete Primary IPs gone, the
   * others unassigned. `action`: record `delete_server` (any deletion through the API or console).
   */
  removeServer(server: Server, action = true): Action | undefined {
    for (const pn of [...server.private_net]) {
      const network = this.networks.get(pn.network!);
      if (network) this.detachServer(server, network);
    }
    for (const ip of [...this.primaryIps.values()]) {
      if (ip.assignee_id !== server.id) continue;
      if (ip.auto_delete) this.primaryIps.delete(ip.id);
      else ip.assignee_id = null;
    }
    // The API drops a deleted server from load balancer targets.
    for (const lb of this.loadBalancers.values()) {
      lb.targets = lb.targets.filter((t) => !(t.type === "server" && t.server?.id === server.id));
    }
    this.servers.delete(server.id);
    return action ? this.startAction("delete_server", [{ id: server.id, type: "server" }]) : undefined;
  }

  /**
   * Moves a server to another IP in a network as a user would (detach, attach), recording both
   * actions; attaches it when it was not attached.
   */
  moveServerIp(server: Server, network: Network, ip?: string): string {
    const resources = [{ id: server.id, type: "server" }, { id: network.id, type: "network" }];
    if (server.private_net.some((pn) => pn.network === network.id)) {
      this.detachServer(server, network);
      this.startAction("detach_from_network", resources, 0);
    }
    const chosen = this.attachServer(server, network, ip);
    this.startAction("attach_to_network", resources, 0);
    return chosen;
  }

  /** A fresh public address: an IPv4, or an IPv6 /64 network. */
  allocatePublicIp(type: "ipv4" | "ipv6"): string {
    return type === "ipv4" ? this.#nextIpv4() : this.#nextIpv6();
  }

  /** Detaches a server from a network. */
  detachServer(server: Server, network: Network): void {
    server.private_net = server.private_net.filter((p) => p.network !== network.id);
    network.servers = network.servers.filter((id) => id !== server.id);
  }

  /** Every private IP in use in `network`. */
  usedPrivateIps(network: Network): Set<string> {
    const used = new Set<string>();
    for (const s of this.servers.values()) {
      for (const p of s.private_net) {
        if (p.network === network.id) {
          [p.ip, ...(p.alias_ips ?? [])].forEach((ip) => ip && used.add(ip));
        }
      }
    }
    for (const lb of this.loadBalancers.values()) {
      for (const p of lb.private_net) if (p.network === network.id && p.ip) used.add(p.ip);
    }
    return used;
  }

  /**
   * Picks `ip` (checked) or the first free address of a subnet in `zone` (or of `ipRange`), after
   * the gateway. Throws the API's `ip_not_available` / `no_subnet_available`.
   */
  allocatePrivateIp(network: Network, zone: string, ip?: string, ipRange?: string): string {
    const used = this.usedPrivateIps(network);
    const subnets = network.subnets.filter((s) =>
      s.network_zone === zone && s.type !== "vswitch" &&
      (!ipRange || s.ip_range === ipRange)
    );
    if (subnets.length === 0) {
      throw faults.code(422, "no_subnet_available", `no subnet available in network zone ${zone}`);
    }
    if (ip) {
      const subnet = subnets.find((s) => cidrContains(parseCidr(s.ip_range!)!, ip));
      if (!subnet || used.has(ip) || ip === subnet.gateway) {
        throw faults.code(422, "ip_not_available", `IP ${ip} is not available`);
      }
      return ip;
    }
    for (const s of subnets) {
      const range = parseCidr(s.ip_range!)!;
      const gateway = parseIp(s.gateway)!.value;
      for (let v = range.network + 1n; v < lastAddress(range); v++) {
        if (v === gateway) continue;
        const candidate = formatIp(4, v);
        if (!used.has(candidate)) return candidate;
      }
    }
    throw faults.code(422, "no_subnet_available", "no free IP left in the subnets of this network zone");
  }

  #nextIpv4(): string {
    const n = this.#ipv4++;
    // 198.18.0.0/15 (benchmarking range): 131072 addresses, skipping .0 and .255.
    const host = 1 + (n % 254);
    const block = Math.floor(n / 254);
    return `198.${18 + Math.floor(block / 256)}.${block % 256}.${host}`;
  }

  #nextIpv6(): string {
    const n = ++this.#ipv6;
    return `2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::/64`;
  }

  /** Allocates public addresses for a load balancer. */
  publicAddresses(): { ipv4: string; ipv6: string } {
    return { ipv4: this.#nextIpv4(), ipv6: this.#nextIpv6().replace("::/64", "::1") };
  }
}

function macOf(a: number, b: number): string {
  const bytes = [0x86, 0x00, (a >> 16) & 255, (a >> 8) & 255, a & 255, b & 255];
  return bytes.map((x) => x.toString(16).padStart(2, "0")).join(":");
}

/** Re-exported for handlers. */
export { ApiFault };
