/**
 * Robot Nodes as the official CCM initializes them: provider ID `hrobot://<number>` (the legacy
 * `hcloud://bm-<number>` is read, and written only with `hrobotProviderIds: false`), instance type from the product, zone the data
 * center and region its location, addresses per address family (IPv6 `<net>1` before IPv4, then
 * the kubelet's InternalIPs when forwarded), and the `external-ipv6` annotation. Plus the
 * `instance.hetzner.cloud/is-root-server=true` label the official CSI driver's docs ask users to set.
 *
 * @module
 */
import type { Node, NodeAddress } from "kubernetes-types/core/v1.d.ts";
import type { InstanceMetadata, MachineRecord, ProviderWarning } from "../../provider.ts";
import type { AddressFamily } from "./address_family.ts";
import type { RobotServerInfo, RobotServers, RobotSnapshot } from "../robot/mod.ts";
import { applyExternalIpv6 } from "./external_ipv6.ts";
import { applyAddressOverrides } from "./address_override.ts";
import { TerminalError } from "../../errors.ts";
import { logger } from "../../../lib/log.ts";
import { IS_ROOT_SERVER_LABEL, PROVIDED_BY_LABEL } from "../names.ts";

/** Settings that shape Robot metadata. */
export interface RobotMetadataOptions {
  addressFamily: AddressFamily;
  forwardInternalIps: boolean;
  /** False: new Robot Nodes get `hcloud://bm-<number>` (Cluster API Provider Hetzner's form). */
  hrobotProviderIds?: boolean;
  /** `location`: zone = the location (`fsn1`), region = its network zone (default `legacy`). */
  topology?: "legacy" | "location";
}

/** The network zone of each Robot location (Robot's data centers are all in eu-central). */
const ROBOT_NETWORK_ZONE: Record<string, string> = {
  fsn1: "eu-central",
  nbg1: "eu-central",
  hel1: "eu-central",
};

/** The provider ID written on a Robot Node that has none. */
export function robotProviderId(number: number, hrobotProviderIds = true): string {
  return hrobotProviderIds ? `hrobot://${number}` : `hcloud://bm-${number}`;
}

/** Robot metadata of `node` from its server. */
export function robotMetadata(
  node: Node,
  server: RobotServerInfo,
  options: RobotMetadataOptions,
): InstanceMetadata {
  const { addresses, warnings } = robotAddresses(node, server, options);
  const derived = server.ipv6Net ? `${server.ipv6Net}1` : undefined;
  const withIpv6 = applyExternalIpv6(node, addresses, options.addressFamily, derived);
  const zone = server.dc.toLowerCase();
  const all = [...warnings, ...withIpv6.warnings];
  return {
    ...(all.length ? { warnings: all } : {}),
    // A Node's provider ID is never changed once set (the apiserver refuses it): keep the form it has.
    providerID: node.spec?.providerID ?? robotProviderId(server.number, options.hrobotProviderIds),
    instanceType: server.product.replaceAll(" ", "-").replace(/[^a-zA-Z0-9_.-]+/g, ""),
    ...(options.topology === "location"
      ? { zone: zone.split("-")[0] || undefined, region: ROBOT_NETWORK_ZONE[zone.split("-")[0]] }
      : { zone: zone || undefined, region: zone.split("-")[0] || undefined }),
    nodeAddresses: applyAddressOverrides(node, withIpv6.addresses),
    additionalLabels: {
      [PROVIDED_BY_LABEL]: "robot",
      [IS_ROOT_SERVER_LABEL]: "true",
    },
  };
}

/** Hostname, ExternalIP v6 (`<net>1`), ExternalIP v4, then forwarded InternalIPs that fit. */
export function robotAddresses(
  node: Node,
  server: RobotServerInfo,
  options: RobotMetadataOptions,
): { addresses: NodeAddress[]; warnings: ProviderWarning[] } {
  const family = options.addressFamily;
  const ipv4 = family !== "ipv6";
  const ipv6 = family !== "ipv4";
  const addresses: NodeAddress[] = [{ type: "Hostname", address: server.name }];
  // A server without IPv6 has no net: no address (the official CCM would report a bare "1").
  if (ipv6 && server.ipv6Net) addresses.push({ type: "ExternalIP", address: `${server.ipv6Net}1` });
  if (ipv4 && server.ipv4) addresses.push({ type: "ExternalIP", address: server.ipv4 });
  const warnings: ProviderWarning[] = [];
  if (!options.forwardInternalIps) return { addresses, warnings };
  for (const current of node.status?.addresses ?? []) {
    if (current.type !== "InternalIP") continue;
    const isV4 = !current.address.includes(":");
    let problem: string | undefined;
    if (family === "ipv6" && isV4) {
      problem =
        `InternalIP ${current.address} is IPv4 but HCLOUD_INSTANCES_ADDRESS_FAMILY=ipv6; it is not kept`;
    } else if (family === "ipv4" && !isV4) {
      problem =
        `InternalIP ${current.address} is IPv6 but HCLOUD_INSTANCES_ADDRESS_FAMILY=ipv4; it is not kept`;
    } else if (addresses.some((a) => a.address === current.address)) {
      problem = `InternalIP ${current.address} is also an ExternalIP; it is not kept as InternalIP`;
    }
    if (problem) warnings.push({ reason: "MisconfiguredInternalIP", message: problem });
    else addresses.push({ type: "InternalIP", address: current.address });
  }
  return { addresses, warnings };
}

/**
 * Robot Nodes for {@link HcloudInstances}: lookups in the one cached Robot list, existence checks
 * that only a fresh list can answer with "gone", and the reset state for shutdown.
 */
export class RobotInstances {
  readonly #servers?: RobotServers;
  readonly #options: RobotMetadataOptions;

  /** `servers` is absent without Robot credentials: Robot Nodes then wait with a clear error. */
  constructor(servers: RobotServers | undefined, options: RobotMetadataOptions) {
    this.#servers = servers;
    this.#options = options;
  }

  /** Metadata of the Robot Node behind provider ID number `number`, or undefined when none matches. */
  async metadata(node: Node, number: number): Promise<InstanceMetadata | undefined> {
    const server = await this.#server(node, number);
    return server && this.metadataOf(node, server);
  }

  /** Metadata of `node` from `server`. */
  metadataOf(node: Node, server: RobotServerInfo): InstanceMetadata {
    return robotMetadata(node, server, this.#options);
  }

  /** The Robot server's record (see `HcloudInstances.machineRecord`): name, IPv4, IPv6 /64. */
  async record(node: Node, number: number): Promise<MachineRecord | undefined> {
    const server = await this.#server(node, number);
    if (!server) return undefined;
    const cidrs = [
      ...(server.ipv4 ? [`${server.ipv4}/32`] : []),
      ...(server.ipv6Net ? [`${server.ipv6Net}/64`] : []),
    ];
    const providerID = node.spec?.providerID ??
      robotProviderId(server.number, this.#options.hrobotProviderIds);
    return { providerID, names: [server.name], cidrs };
  }

  /** True when Robot reports the server powered off (`GET /reset`: `shut off`). */
  async shutdown(number: number): Promise<boolean> {
    return this.#servers ? (await this.#servers.client.operatingStatus(number)) === "shut off" : false;
  }

  /** A Robot server named like the Node (none without credentials). */
  async byName(node: Node): Promise<RobotServerInfo | undefined> {
    if (!this.#servers) return undefined;
    const name = node.metadata?.name ?? "";
    return (await this.#read(node, (s) => s.byName.get(name))).byName.get(name);
  }

  /** False only when a list read now lacks the server (or names it otherwise); errors never delete. */
  async exists(node: Node, number: number): Promise<boolean> {
    if (!this.#servers) return true; // cannot tell: never delete
    // Asked for a NotReady Node: once per transition, a list taken after it (a server cancelled just
    // before its kubelet stopped is seen at once, not after the cache timeout).
    const ready = (node.status?.conditions ?? []).find((c) => c.type === "Ready");
    const since = ready && ready.status !== "True" ? Date.parse(ready.lastTransitionTime ?? "") || 0 : 0;
    const server = (await this.#servers.get(since)).byNumber.get(number);
    if (server?.name === node.metadata?.name) return true;
    if (!(await this.#servers.confirmedMissing(number))) {
      return (await this.#server(node, number)) !== undefined;
    }
    return false;
  }

  /**
   * The server behind a Robot provider ID, when its name still is the Node's: a server renamed
   * (Cluster API reuses them) no longer belongs to this Node, as in the official CCM.
   */
  async #server(node: Node, number: number): Promise<RobotServerInfo | undefined> {
    const server = (await this.#read(node, (s) => s.byNumber.get(number))).byNumber.get(number);
    if (server && server.name !== node.metadata?.name) {
      logger("hcloud").warning(
        "Robot server {number} is named {server}, not {node}: it no longer matches the Node",
        { number, server: server.name, node: node.metadata?.name },
      );
      return undefined;
    }
    return server;
  }

  /**
   * The cached list, read again only when it misses what the Node needs and is older than the Node
   * (a server renamed just before its Node joined): Robot allows 200 lists an hour, and a dedicated
   * server is ordered long before its Node exists, so a burst of joins shares one list.
   */
  async #read(node: Node, has: (s: RobotSnapshot) => unknown): Promise<RobotSnapshot> {
    if (!this.#servers) {
      throw new TerminalError(
        "the Node is a Robot server and no Robot credentials are configured (ROBOT_USER, ROBOT_PASSWORD)",
      );
    }
    const snapshot = await this.#servers.get();
    const created = Date.parse(node.metadata?.creationTimestamp ?? "") || 0;
    return has(snapshot) || snapshot.at >= created ? snapshot : await this.#servers.get(created);
  }
}
