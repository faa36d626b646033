/**
 * Routes in a Hetzner private network: destination = pod CIDR, gateway = the node's private IP.
 * `listRoutes` costs one `GET /networks/{id}`; create and delete reuse what it read, so a
 * reconciliation reads the network once.
 *
 * @module
 */
import { withSignal } from "../../../lib/cancellation.ts";
import type { Route, Routes } from "../../provider.ts";
import { LimitReachedError, TerminalError } from "../../errors.ts";
import {
  type ActionWaiter,
  CloudApiError,
  type HcloudClient,
  type NetworkInfo,
  type ServerInfo,
  toNetworkInfo,
} from "../../../hcloud_api/mod.ts";
import type { ConfiguredNetwork, HcloudContext } from "../context.ts";
import type { ServerCache } from "../servers/mod.ts";
import { cidrContains, parseCidr } from "../../../lib/cidr.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { cloudProviderId, parseProviderId } from "../provider_id.ts";

/**
 * Routes one Hetzner Network holds, everyone's together: documented to users (an HCCM maintainer in
 * kube-hetzner #1477, HCCM #342), not in the API spec. The API answers `resource_limit_exceeded`.
 */
export const NETWORK_ROUTE_LIMIT = 100;

/** Servers of the network unknown to the last list read one by one before a full list is cheaper. */
const MAX_FRESH_READS = 10;

/** See the module doc. The network's ID is read when used, since it is resolved at initialization. */
export class HcloudRoutes implements Routes {
  /** The routes a Network holds (the API's limit). */
  readonly maxRoutes: number = NETWORK_ROUTE_LIMIT;
  readonly #client: HcloudClient;
  readonly #actions: ActionWaiter;
  readonly #configured: ConfiguredNetwork;
  readonly #cache: ServerCache;
  #network?: NetworkInfo;
  /**
   * Servers of the Network the last list did not know, as read directly, with the unplaced gateways
   * each was read for (the read answers for those until the list knows the server).
   */
  readonly #unlisted = new Map<number, { server: ServerInfo; checked: Set<string> }>();

  /** Routes of the configured Network, through the shared context. */
  constructor(ctx: HcloudContext) {
    this.#client = ctx.client;
    this.#actions = ctx.actions;
    this.#configured = ctx.network;
    this.#cache = ctx.cache;
  }

  /** Robot Nodes are not in the Cloud network: routes cannot use them as a gateway. */
  unroutable(node: Node): string | undefined {
    return parseProviderId(node.spec?.providerID).kind === "robot"
      ? "the Node is a Robot server, which a Hetzner Cloud network route cannot point at; its pods need the CNI's own routing (or a vSwitch)"
      : undefined;
  }

  /** Every route of the network; the gateway is reported as the target's InternalIP. */
  async listRoutes(_clusterName: string, signal?: AbortSignal): Promise<Route[]> {
    return await withSignal(signal, async () => {
      const id = this.#id();
      const data = await this.#client.call(
        "get network",
        this.#client.api.GET("/networks/{id}", { params: { path: { id } } }),
      );
      this.#network = toNetworkInfo(data.network);
      const holders = await this.#gatewayHolders(this.#network);
      return this.#network.routes.map((r) => {
        const holder = holders.get(r.gateway);
        return {
          name: `${r.gateway}-${r.destination}`,
          targetNode: "",
          targetNodeAddresses: [{ type: "InternalIP", address: r.gateway }],
          destinationCIDR: r.destination,
          ...(holder ? { gatewayProviderID: cloudProviderId(holder.id) } : {}),
        };
      });
    });
  }

  /**
   * The server holding each route's gateway in `network`. The last server list answers at no cost;
   * when it cannot place a gateway, and the network (as the API answered just now) has servers the
   * list does not know, those are read now (review N8: a route through another cluster's new server
   * was deleted, its owner unknown to a snapshot). A route whose gateway no attached server holds is
   * then stale on an answer read for that gateway, not on one read before the route was there. At
   * most {@link MAX_FRESH_READS} servers are read singly; more unknown ones wait for a full list.
   */
  async #gatewayHolders(network: NetworkInfo): Promise<Map<string, ServerInfo>> {
    const holders = new Map<string, ServerInfo>();
    const holds = (s: ServerInfo, gateway: string) =>
      s.privateNets.some((p) => p.network === network.id && p.ip === gateway);
    let servers = this.#cache.peek();
    const place = (gateway: string) => {
      const holder = servers?.byIp.get(gateway)?.find((s) => holds(s, gateway));
      if (holder) holders.set(gateway, holder);
    };
    for (const r of network.routes) place(r.gateway);
    const unplaced = network.routes.filter((r) => !holders.has(r.gateway));
    if (!unplaced.length) return holders;
    servers ??= await this.#cache.get();
    const unknown = network.servers.filter((id) => !servers!.byId.has(id));
    if (unknown.length > MAX_FRESH_READS) {
      servers = await this.#cache.get({ maxAgeMs: 0, full: true });
      for (const r of unplaced) place(r.gateway);
      return holders;
    }
    const placed = (server: ServerInfo) => unplaced.find((r) => holds(server, r.gateway))?.gateway;
    const gateways = new Set(unplaced.map((r) => r.gateway));
    for (const id of unknown) {
      // A read is kept while it answers: it placed a gateway (a route through another cluster's
      // server costs one read, not one per pass), or it was read for every gateway now unplaced. A
      // gateway new since the read is read for again, as a deletion would rest on it (a server
      // attached with the address while it was read); an unchanged one is not: a route through an
      // address no server holds (a vSwitch gateway, another owner's) cost a read per server the list
      // did not know at every pass, for as long as nothing listed the servers (explorer seed 5858 of
      // workload 1: a cluster left with no Node read one server every 30 s).
      const remembered = this.#unlisted.get(id);
      const answers = remembered &&
        (placed(remembered.server) || [...gateways].every((g) => remembered.checked.has(g)));
      const server = answers ? remembered.server : await this.#cache.fresh(id);
      if (!server) {
        this.#unlisted.delete(id);
        continue;
      }
      const gateway = placed(server);
      if (gateway) holders.set(gateway, server);
      this.#unlisted.set(id, { server, checked: answers ? remembered.checked : gateways });
    }
    // Forgotten once the list knows the server, or the Network no longer holds it.
    for (const id of [...this.#unlisted.keys()]) {
      if (servers.byId.has(id) || !network.servers.includes(id)) this.#unlisted.delete(id);
    }
    return holders;
  }

  /** Adds the route via the node's InternalIP inside the network's range. */
  async createRoute(
    _clusterName: string,
    _nameHint: string,
    route: Route,
    signal?: AbortSignal,
  ): Promise<void> {
    return await withSignal(signal, async () => {
      const destination = parseCidr(route.destinationCIDR);
      if (!destination) throw new TerminalError(`route destination "${route.destinationCIDR}" is not a CIDR`);
      if (destination.family === 6) {
        throw new TerminalError("Hetzner private networks do not support IPv6 routes");
      }
      const network = this.#network ?? toNetworkInfo(
        (await this.#client.call(
          "get network",
          this.#client.api.GET("/networks/{id}", { params: { path: { id: this.#id() } } }),
        )).network,
      );
      const range = parseCidr(network.ipRange)!;
      const gateway = (route.targetNodeAddresses ?? []).find((a) =>
        a.type === "InternalIP" && cidrContains(range, a.address)
      )?.address;
      if (!gateway) {
        // Retrying cannot help until the Node's addresses change (which brings a run anyway).
        throw new TerminalError(
          `node ${route.targetNode} has no InternalIP in network ${network.name} (${network.ipRange}); is its ` +
            `server attached to the network? (a network holds at most 100 servers)`,
        );
      }
      const id = network.id;
      const data = await this.#client.call(
        "add route",
        this.#client.api.POST("/networks/{id}/actions/add_route", {
          params: { path: { id } },
          body: { destination: destination.text, gateway },
        }),
      ).catch((err) => {
        if (err instanceof CloudApiError && err.code === "resource_limit_exceeded") {
          throw new LimitReachedError(`routes in network ${network.name}`, NETWORK_ROUTE_LIMIT, {
            cause: err,
          });
        }
        throw err;
      });
      await this.#actions.wait(data.action);
      network.routes.push({ destination: destination.text, gateway });
    });
  }

  /** Deletes the route (its gateway comes from the listing). */
  async deleteRoute(_clusterName: string, route: Route, signal?: AbortSignal): Promise<void> {
    return await withSignal(signal, async () => {
      const gateway = route.targetNodeAddresses?.find((a) => a.type === "InternalIP")?.address ??
        this.#network?.routes.find((r) => r.destination === route.destinationCIDR)?.gateway;
      if (!gateway) throw new Error(`no gateway known for route ${route.destinationCIDR}`);
      const id = this.#id();
      try {
        const data = await this.#client.call(
          "delete route",
          this.#client.api.POST("/networks/{id}/actions/delete_route", {
            params: { path: { id } },
            body: { destination: route.destinationCIDR, gateway },
          }),
        );
        await this.#actions.wait(data.action);
      } catch (err) {
        if ((err as { status?: number }).status !== 404) throw err; // already gone
      }
      if (this.#network) {
        this.#network.routes = this.#network.routes.filter((r) =>
          !(r.destination === route.destinationCIDR && r.gateway === gateway)
        );
      }
    });
  }

  #id(): number {
    const id = this.#configured.id;
    if (id === undefined) throw new Error("the network is not resolved yet");
    return id;
  }
}
