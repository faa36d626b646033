/**
 * Instances for Hetzner Cloud servers, with the official CCM's provider IDs, labels and addresses,
 * all served from the shared {@link ServerCache}.
 *
 * @module
 */
import { withSignal } from "../../../lib/cancellation.ts";
import type { Node, NodeAddress } from "kubernetes-types/core/v1.d.ts";
import type { InstanceMetadata, Instances, MachineRecord, MetadataPurpose } from "../../provider.ts";
import { ProviderError, TerminalError } from "../../errors.ts";
import { CloudApiError } from "../../../hcloud_api/mod.ts";
import type { HcloudClient, ServerInfo } from "../../../hcloud_api/mod.ts";
import type { AddressFamily } from "./address_family.ts";
import { ipv6HostOne, type ServerCache, type ServerSnapshot } from "../servers/mod.ts";
import { applyExternalIpv6 } from "./external_ipv6.ts";
import { applyAddressOverrides } from "./address_override.ts";
import {
  DEFAULT_SERVER_LABEL_PREFIX,
  nodeLabelsFromServer,
  nodeTaintsFromServer,
  type ServerTaintPattern,
} from "./node_labels.ts";
import type { ConfiguredNetwork, HcloudContext } from "../context.ts";
import { RobotInstances } from "./robot.ts";
import { PROVIDED_NODE_IP } from "../../../kube/well_known.ts";
import { cloudProviderId, parseProviderId } from "../provider_id.ts";
import { PROVIDED_BY_LABEL } from "../names.ts";

const INIT_MAX_AGE_MS = 300_000;

/** Legacy zone names: the official CCM reports the old datacenter name as the zone. */
const LEGACY_DATACENTER: Record<string, string> = {
  fsn1: "fsn1-dc14",
  nbg1: "nbg1-dc3",
  hel1: "hel1-dc2",
  ash: "ash-dc1",
  hil: "hil-dc1",
  sin: "sin-dc1",
};

/** Settings of {@link HcloudInstances}. */
export interface InstancesOptions {
  addressFamily: AddressFamily;
  zoneLabelEnabled: boolean;
  /** `location`: zone = the location, region = its network zone (default `legacy`, the official CCM's). */
  topology?: "legacy" | "location";
  /** `HCLOUD_INSTANCES_NODE_NAME_SUFFIX`: a Node named `<server>.<suffix>` matches `<server>`. */
  nodeNameSuffix?: string;
  /** Server label keys (or `prefix*`) kept in step as Node labels under `serverLabelPrefix`. */
  serverLabels?: string[];
  /** Server label keys (or `prefix*`) kept in step as Node taints under `serverLabelPrefix`. */
  serverTaints?: ServerTaintPattern[];
  /** Server label keys (or `prefix*`) set as Node taints once, when the Node is initialized. */
  serverStartupTaints?: ServerTaintPattern[];
  serverLabelPrefix?: string;
  /** `ROBOT_FORWARD_INTERNAL_IPS`. */
  forwardInternalIps?: boolean;
  /** `HCLOUD_USE_HROBOT_PROVIDER_ID_FOR_BAREMETAL` (default true): false writes `hcloud://bm-<n>`. */
  hrobotProviderIds?: boolean;
}

/** See the module doc. */
export class HcloudInstances implements Instances {
  readonly #cache: ServerCache;
  readonly #client: HcloudClient;
  readonly #network: ConfiguredNetwork;
  readonly #options: InstancesOptions;
  /** Robot Nodes, when `ROBOT_ENABLED`. */
  readonly #robot?: RobotInstances;

  /** Instances over the shared context's client and server cache. */
  constructor(ctx: HcloudContext, options: InstancesOptions) {
    this.#client = ctx.client;
    this.#cache = ctx.cache;
    this.#network = ctx.network;
    this.#options = options;
    if (ctx.robotEnabled) {
      this.#robot = new RobotInstances(ctx.robot, {
        addressFamily: options.addressFamily,
        forwardInternalIps: options.forwardInternalIps ?? false,
        hrobotProviderIds: options.hrobotProviderIds,
        topology: options.topology,
      });
    }
  }

  /**
   * False only when the server is confirmed gone: a cache miss is checked once with a direct
   * `GET /servers/{id}` (404), because a Node is deleted on this answer.
   */
  async instanceExists(node: Node, signal?: AbortSignal): Promise<boolean> {
    return await withSignal(signal, async () => {
      const parsed = parseProviderId(node.spec?.providerID);
      if (parsed.kind === "robot") return this.#robot ? await this.#robot.exists(node, parsed.number) : true;
      if (parsed.kind === "foreign") return true; // not ours: never delete
      // Following action logs, the snapshot may not show a change made without one: ask directly.
      if (parsed.kind === "cloud" && this.#cache.refreshMode === "actions") {
        const started = this.#cache.now();
        const { info, at } = await this.#cache.serverRead(parsed.id);
        if (info) return true;
        if (at >= started) return false;
        // Missing from what was read earlier (perhaps during an API incident): confirmed by a read now.
        return (await this.#cache.fresh(parsed.id)) !== undefined;
      }
      const server = await this.#find(node);
      if (server) return true;
      if (parsed.kind === "none" && await this.#robot?.byName(node)) return true;
      if (parsed.kind !== "cloud") {
        // Matched by name: confirm the miss with a direct lookup before a Node is deleted on it.
        for (const name of serverNames(node, this.#options.nodeNameSuffix)) {
          const data = await this.#client.call(
            "find server",
            this.#client.api.GET("/servers", { params: { query: { name } } }),
          );
          if (data.servers.length > 0) return true;
        }
        return false;
      }
      try {
        await this.#client.call(
          "get server",
          this.#client.api.GET("/servers/{id}", { params: { path: { id: parsed.id } } }),
        );
        return true;
      } catch (err) {
        if (err instanceof CloudApiError && err.status === 404) return false;
        throw err;
      }
    });
  }

  /** True when the server's status is `off` (other transitional states are not shutdown). */
  async instanceShutdown(node: Node, signal?: AbortSignal): Promise<boolean> {
    return await withSignal(signal, async () => {
      const parsed = parseProviderId(node.spec?.providerID);
      if (parsed.kind === "robot") return (await this.#robot?.shutdown(parsed.number)) ?? false;
      // A shutdown from inside the server records no action: read it directly when following logs.
      const server = parsed.kind === "cloud" && this.#cache.refreshMode === "actions"
        ? await this.#cache.server(parsed.id)
        : await this.#find(node);
      return server?.status === "off";
    });
  }

  /** Metadata of the Node's server, or undefined when none matches it. */
  async instanceMetadata(
    node: Node,
    purpose: MetadataPurpose = "refresh",
    signal?: AbortSignal,
  ): Promise<InstanceMetadata | undefined> {
    return await withSignal(signal, async () => {
      const parsed = parseProviderId(node.spec?.providerID);
      if (parsed.kind === "robot") {
        if (!this.#robot) {
          throw new TerminalError("the Node is a Robot server and Robot support is off (ROBOT_ENABLED)");
        }
        return await this.#robot.metadata(node, parsed.number);
      }
      if (parsed.kind === "foreign") {
        throw new TerminalError(`provider ID "${parsed.raw}" ${parsed.why}; the Node is left alone`);
      }
      const server = await this.#find(node, purpose);
      const robotServer = parsed.kind === "none" ? await this.#robot?.byName(node) : undefined;
      if (server && robotServer) {
        const message =
          `Node ${node.metadata?.name} could not be uniquely associated with a Cloud or Robot ` +
          `server, as a server with this name exists in both APIs`;
        throw new ProviderError(new Error(message), {
          warnings: [{ reason: "InstanceLookupFailed", message }],
        });
      }
      if (robotServer) return this.#robot!.metadataOf(node, robotServer);
      if (!server) return undefined;
      const derived = server.ipv6Net ? ipv6HostOne(server.ipv6Net) : undefined;
      const { addresses: withIpv6, warnings } = applyExternalIpv6(
        node,
        this.addressesOf(server),
        this.#options.addressFamily,
        derived,
      );
      const addresses = applyAddressOverrides(node, withIpv6);
      // Server labels copied as Node labels and taints, under one prefix.
      const {
        serverLabels,
        serverTaints,
        serverStartupTaints,
        serverLabelPrefix: prefix = DEFAULT_SERVER_LABEL_PREFIX,
      } = this.#options;
      return {
        ...(warnings.length ? { warnings } : {}),
        providerID: cloudProviderId(server.id),
        instanceType: server.serverType,
        ...(this.#options.topology === "location"
          ? {
            region: server.networkZone || undefined,
            zone: this.#options.zoneLabelEnabled ? server.location : undefined,
          }
          : {
            region: server.location,
            zone: this.#options.zoneLabelEnabled
              ? LEGACY_DATACENTER[server.location] ?? server.location
              : undefined,
          }),
        nodeAddresses: addresses,
        additionalLabels: { [PROVIDED_BY_LABEL]: "cloud" },
        ...(serverLabels
          ? {
            syncedLabels: {
              prefix: `${prefix}/`,
              labels: nodeLabelsFromServer(server.labels, serverLabels, prefix),
            },
          }
          : {}),
        ...(serverTaints
          ? {
            syncedTaints: {
              prefix: `${prefix}/`,
              taints: nodeTaintsFromServer(server.labels, serverTaints, prefix),
            },
          }
          : {}),
        ...(serverStartupTaints
          ? { startupTaints: nodeTaintsFromServer(server.labels, serverStartupTaints, prefix) }
          : {}),
      };
    });
  }

  /**
   * The server behind a Cloud provider ID (or the Robot server behind a Robot one), named as the
   * Node: its name, public IPv4, IPv6 network and its private IP in the cluster network (every
   * network's without one, marked as shared). Nothing the Node says
   * of itself (annotations, the kubelet's node IP) counts.
   */
  async machineRecord(
    node: Node,
    purpose: MetadataPurpose = "refresh",
    signal?: AbortSignal,
  ): Promise<MachineRecord | undefined> {
    return await withSignal(signal, async () => {
      const parsed = parseProviderId(node.spec?.providerID);
      if (parsed.kind === "robot") return await this.#robot?.record(node, parsed.number);
      if (parsed.kind !== "cloud") return undefined;
      const server = await this.#find(node, purpose);
      if (!server || !serverNames(node, this.#options.nodeNameSuffix).includes(server.name)) return undefined;
      const cidrs = [
        ...(server.ipv4 && server.ipv4 !== "0.0.0.0" ? [`${server.ipv4}/32`] : []),
        ...(server.ipv6Net ? [server.ipv6Net] : []),
        // Only the cluster network's private IP (probe P5): another network may overlap it and give
        // this machine an address that is another Node's in the cluster. Without HCLOUD_NETWORK,
        // every network's, and the approver refuses one another Node has (sharedCidrs).
        ...server.privateNets.filter((p) => this.#network.id === undefined || p.network === this.#network.id)
          .map((p) => `${p.ip}/32`),
      ];
      const sharedCidrs = this.#network.id === undefined ? server.privateNets.map((p) => `${p.ip}/32`) : [];
      return {
        providerID: cloudProviderId(server.id),
        names: [server.name],
        cidrs,
        sharedCidrs,
        ...(sharedCidrs.length
          ? { sharedCidrsAdvice: "set HCLOUD_NETWORK so that only the cluster network's address counts" }
          : {}),
      };
    });
  }

  /** The official CCM's address list: Hostname, ExternalIP v4, ExternalIP v6 `::1`, InternalIP. */
  addressesOf(server: ServerInfo): NodeAddress[] {
    const family = this.#options.addressFamily;
    const addresses: NodeAddress[] = [{ type: "Hostname", address: server.name }];
    if (family !== "ipv6" && server.ipv4 && server.ipv4 !== "0.0.0.0") {
      addresses.push({ type: "ExternalIP", address: server.ipv4 });
    }
    if (family !== "ipv4" && server.ipv6Net) {
      addresses.push({ type: "ExternalIP", address: ipv6HostOne(server.ipv6Net) });
    }
    const networkId = this.#network.id;
    const privateIp = server.privateNets.find((p) => p.network === networkId)?.ip;
    if (networkId !== undefined && privateIp) {
      addresses.push({ type: "InternalIP", address: privateIp });
    }
    return addresses;
  }

  /**
   * Finds the Node's server: by provider ID, else by name, else by the kubelet's provided node IP
   * when exactly one server has it. The snapshot must be newer than the Node, so a server created
   * just before its Node is never missed.
   */
  async #find(node: Node, purpose: MetadataPurpose = "refresh"): Promise<ServerInfo | undefined> {
    // creationTimestamp has one-second resolution, so this may accept a list up to a second older
    // than the Node; misses are retried, and a deletion is always confirmed by a direct lookup.
    const created = Date.parse(node.metadata?.creationTimestamp ?? "") || 0;
    // Initialization only needs a list newer than the Node (a server's type, location and IPs
    // do not change under it), so a burst of joining Nodes shares one list however long it takes.
    if (purpose === "initialize") {
      const found = lookup(
        await this.#cache.get({ notBefore: created, maxAgeMs: INIT_MAX_AGE_MS }),
        node,
        this.#options.nodeNameSuffix,
      );
      if (found) return found;
    }
    const snapshot = await this.#cache.get({ notBefore: created });
    const found = lookup(snapshot, node, this.#options.nodeNameSuffix);
    // Renames are no actions, and a list that came back empty in an API incident is not followed by
    // any: a server an incremental refresh misses gets one full list (per max age) before it is missing.
    if (found || snapshot.full) return found;
    return lookup(
      await this.#cache.get({ notBefore: created, full: true }),
      node,
      this.#options.nodeNameSuffix,
    );
  }
}

/** The server names a Node may match: its own name, then without the configured domain suffix. */
export function serverNames(node: Node, suffix?: string): string[] {
  const name = node.metadata?.name ?? "";
  return suffix && name.endsWith(suffix) && name.length > suffix.length
    ? [name, name.slice(0, -suffix.length)]
    : [name];
}

/** Pure lookup of a Node's server in a snapshot. */
export function lookup(snapshot: ServerSnapshot, node: Node, nameSuffix?: string): ServerInfo | undefined {
  const parsed = parseProviderId(node.spec?.providerID);
  if (parsed.kind === "cloud") return snapshot.byId.get(parsed.id);
  if (parsed.kind !== "none") return undefined;
  for (const name of serverNames(node, nameSuffix)) {
    const byName = snapshot.byName.get(name);
    if (byName) return byName;
  }
  const ips = (node.metadata?.annotations?.[PROVIDED_NODE_IP] ?? "").split(",").map((s) => s.trim()).filter(
    Boolean,
  );
  for (const ip of ips) {
    const matches = snapshot.byIp.get(ip) ?? [];
    if (matches.length === 1) return matches[0];
  }
  return undefined;
}
