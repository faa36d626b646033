/**
 * The Hetzner Cloud provider: instances (and, as they land, load balancers and routes) on one
 * client, one server cache and one action waiter.
 *
 * @module
 */
import type { CloudProvider, ClusterView, Instances, LoadBalancers, Routes } from "../provider.ts";
import {
  ActionWaiter,
  Credentials,
  HcloudClient,
  type HcloudTransport,
  toNetworkInfo,
} from "../../hcloud_api/mod.ts";
import type { Clock } from "../../lib/clock.ts";
import { RecordSeal } from "./record_seal.ts";
import { CloudApiError } from "../../hcloud_api/mod.ts";
import type { HcloudConfig } from "./config.ts";
import { HcloudInstances } from "./instances/mod.ts";
import { type HcloudContext, hcloudContext } from "./context.ts";
import { ServerCache } from "./servers/mod.ts";
import { HcloudRoutes } from "./routes/mod.ts";
import { HcloudLoadBalancers } from "./load_balancers/mod.ts";
import type { Registry } from "../../lib/metrics.ts";
import { logger } from "../../lib/log.ts";
import { ConfigError } from "../../lib/config_error.ts";
import { adaptInstances, adaptLoadBalancers, adaptRoutes, operationCounter } from "./adapters.ts";
import { RobotClient, RobotServers } from "./robot/mod.ts";

/** See the module doc. */
export class HcloudProvider implements CloudProvider {
  /** The provider's name, as `--cloud-provider` spells it. */
  readonly name = "hcloud";
  /** The Cloud API client every part calls through (one token, one request count). */
  readonly client: HcloudClient;
  /** The server list instances, routes and targets read. */
  readonly cache: ServerCache;
  /** Waits for the actions the writes start. */
  readonly actions: ActionWaiter;
  /** Nodes' machines: Cloud servers and, when enabled, Robot servers (adapted: adapters.ts). */
  readonly instances: Instances;
  /** Present when `HCLOUD_NETWORK` is set and `HCLOUD_NETWORK_ROUTES_ENABLED` is not false. */
  readonly routes?: Routes;
  /** Present unless `HCLOUD_LOAD_BALANCERS_ENABLED=false`. */
  readonly loadBalancers?: LoadBalancers;
  /**
   * The load balancers behind {@link loadBalancers}' adapter: the cluster view goes to them, and tests
   * read what the contract does not show (the reader's parse count).
   */
  readonly hcloudLoadBalancers?: HcloudLoadBalancers;
  /** Why routes or load balancers are off: the setting that turns them on (see the contract). */
  readonly absent: { readonly loadBalancers?: string; readonly routes?: string };
  /** The configuration read from the environment at start. */
  readonly config: HcloudConfig;
  /** `HCLOUD_METRICS_ADDRESS` (default `:8233`, all interfaces) unless `HCLOUD_METRICS_ENABLED=false`. */
  readonly metricsAddress?: { hostname: string; port: number };
  /** What instances, load balancers and routes share (see context.ts). */
  readonly context: HcloudContext;

  readonly #credentials: Credentials;
  /** Whether {@link initialize} has succeeded (the unreachable API is then no longer a readiness problem). */
  #initialized = false;
  readonly #probe: { registry?: Registry; userAgent: string; fetch?: HcloudTransport };
  /** A server this project is known to have (from the last list), to confirm a rotated token. */
  #knownServer?: number;
  /** Leadership: once aborted, no cloud write is sent (see {@link fence}). */
  #fence?: AbortSignal;
  /** The Robot server list, when Robot is enabled with credentials. */
  readonly robot?: RobotServers;

  /**
   * The provider for `config`, counting its requests in `registry`. `options` are for tests and the
   * explorer: the clock its waits and ages run on, and the fetch its requests go through (the
   * simulator's handler in-process).
   */
  constructor(
    config: HcloudConfig,
    registry?: Registry,
    userAgent = "deno-ccm",
    options: { clock?: Clock; fetch?: HcloudTransport } = {},
  ) {
    this.config = config;
    this.#credentials = new Credentials({ token: config.token, file: config.tokenFile });
    this.#probe = { registry, userAgent, fetch: options.fetch };
    this.client = new HcloudClient({
      endpoint: config.endpoint,
      token: this.#credentials,
      userAgent,
      metrics: registry,
      fence: () => this.#fence,
      clock: options.clock,
      fetch: options.fetch,
    });
    if (config.metricsEnabled) {
      const [, host, port] = config.metricsAddress.match(/^(.*):(\d{1,5})$/)!;
      this.metricsAddress = { hostname: host.replace(/^\[(.*)\]$/, "$1") || "0.0.0.0", port: Number(port) };
    }
    this.cache = new ServerCache(this.client, {
      maxAgeMs: config.serverCacheMaxAgeMs,
      refresh: config.serverRefresh,
      fullListPeriodMs: config.serverFullListPeriodMs,
      metrics: registry,
      clock: options.clock,
    });
    this.actions = new ActionWaiter(this.client, { clock: options.clock });
    const robot = config.robot;
    if (robot.enabled && robot.user && robot.password) {
      this.robot = new RobotServers(
        new RobotClient({
          endpoint: robot.endpoint,
          user: robot.user,
          password: robot.password,
          rateLimitWaitMs: robot.rateLimitWaitMs,
          userAgent,
          metrics: registry,
        }),
        robot.cacheTimeoutMs,
      );
    }
    this.context = hcloudContext({
      client: this.client,
      cache: this.cache,
      actions: this.actions,
      robotEnabled: robot.enabled,
      robot: this.robot,
      seal: new RecordSeal(() => this.#credentials.tokens()),
      clock: options.clock,
    });
    const count = operationCounter(registry);
    this.instances = adaptInstances(
      new HcloudInstances(this.context, {
        forwardInternalIps: robot.forwardInternalIps,
        hrobotProviderIds: robot.hrobotProviderIds,
        addressFamily: config.addressFamily,
        zoneLabelEnabled: config.zoneLabelEnabled,
        topology: config.topology,
        nodeNameSuffix: config.nodeNameSuffix,
        serverLabels: config.serverLabels,
        serverLabelPrefix: config.serverLabelPrefix,
        serverTaints: config.serverTaints,
        serverStartupTaints: config.serverStartupTaints,
      }),
      count,
    );
    if (config.loadBalancers.enabled) {
      this.hcloudLoadBalancers = new HcloudLoadBalancers(this.context, config.loadBalancers, registry);
      this.loadBalancers = adaptLoadBalancers(this.hcloudLoadBalancers, count);
    }
    this.absent = {
      loadBalancers: config.loadBalancers.enabled ? undefined : "HCLOUD_LOAD_BALANCERS_ENABLED=false",
      routes: !config.network
        ? "HCLOUD_NETWORK is not set"
        : config.networkRoutesEnabled
        ? undefined
        : "HCLOUD_NETWORK_ROUTES_ENABLED=false",
    };
    if (config.network && config.networkRoutesEnabled) {
      this.routes = adaptRoutes(new HcloudRoutes(this.context), count);
    }
  }

  /** No cloud write after `signal` aborts (a lost lease, shutdown), even from calls under way. */
  fence(signal: AbortSignal): void {
    this.#fence = signal;
  }

  /**
   * Why the cloud cannot be used now: the API rejecting the token (never the token itself); until
   * initialized, also the API unreachable, from the first failed attempt (a network blip later does
   * not make a running CCM unready).
   */
  problem(): string | undefined {
    return this.#credentials.problem() ?? (this.#initialized ? undefined : this.client.unreachable) ??
      this.robot?.client.problem();
  }

  /** Calls `listener` when a new token is in use or the API accepts the token again. */
  onCloudChanged(listener: () => void): void {
    this.#credentials.onChange(listener);
  }

  /**
   * Checks the token (`GET /locations`, as the official CCM does) and resolves `HCLOUD_NETWORK`;
   * the load balancers learn the cluster's identity and Services from `cluster` (without it, as in
   * tools: no cluster label, nothing swept, every owner taken to be alive).
   */
  async initialize(cluster: ClusterView | undefined, signal: AbortSignal): Promise<void> {
    await this.#initialize(cluster, signal);
    this.#initialized = true;
  }

  async #initialize(cluster: ClusterView | undefined, signal: AbortSignal): Promise<void> {
    if (cluster) this.hcloudLoadBalancers?.useCluster(cluster);
    try {
      await this.client.call(
        "validate token",
        this.client.api.GET("/locations", { params: { query: { per_page: 1 } }, signal }),
      );
    } catch (err) {
      // A rejected token does not heal by retrying: a configuration error, as in the official CCM.
      if (err instanceof CloudApiError && (err.status === 401 || err.status === 403)) {
        throw new ConfigError(
          `HCLOUD_TOKEN${
            this.config.tokenFromFile ? ` (from HCLOUD_TOKEN_FILE)` : ""
          }: rejected by the Hetzner ` +
            `API at ${this.config.endpoint} (${err.status} ${err.code}); check the token and its project`,
          { cause: err },
        );
      }
      throw err;
    }
    if (this.config.network) {
      const wanted = this.config.network;
      const byId = /^\d+$/.test(wanted)
        ? await this.client.call(
          "get network",
          this.client.api.GET("/networks/{id}", { params: { path: { id: Number(wanted) } }, signal }),
        )
          .then((d) => d.network, (err) => {
            if (err instanceof CloudApiError && err.status === 404) return undefined;
            throw err;
          })
        : undefined;
      const network = byId ??
        (await this.client.call(
          "find network",
          this.client.api.GET("/networks", { params: { query: { name: wanted } }, signal }),
        ))
          .networks[0];
      if (!network) {
        throw new CloudApiError(`HCLOUD_NETWORK: network "${wanted}" not found`, {
          status: 404,
          code: "not_found",
        });
      }
      this.context.network.resolve(toNetworkInfo(network).id);
      logger("hcloud").info("using network {name} ({id})", { name: network.name, id: network.id });
    }
    // From now on a rotated token is used only once it sees what this project has (see credentials.ts).
    this.cache.onSnapshot((s) => this.#knownServer = s.all[0]?.id ?? this.#knownServer);
    this.#credentials.verifier = (token) => this.#sameProject(token);
    // Robot credentials are checked (and the list cached) now; rejected ones turn /readyz false
    // with the reason, and Robot Nodes wait, but the Cloud side runs on.
    await this.robot?.get().catch((err) =>
      logger("hcloud").warning("Robot: {error}", { error: (err as Error).message })
    );
  }

  /**
   * Whether `token` sees this project: the configured network, else a server of the last list, else
   * (nothing known yet) only that the API accepts it. One request, counted like every other.
   */
  async #sameProject(token: string): Promise<string | undefined> {
    const probe = new HcloudClient({
      endpoint: this.config.endpoint,
      token,
      userAgent: this.#probe.userAgent,
      metrics: this.#probe.registry,
      fetch: this.#probe.fetch,
    });
    const network = this.context.network.id;
    const server = this.#knownServer;
    try {
      if (network !== undefined) {
        await probe.call(
          "check token",
          probe.api.GET("/networks/{id}", { params: { path: { id: network } } }),
        );
      } else if (server !== undefined) {
        await probe.call("check token", probe.api.GET("/servers/{id}", { params: { path: { id: server } } }));
      } else {
        await probe.call(
          "check token",
          probe.api.GET("/locations", { params: { query: { per_page: 1 } } }),
        );
      }
      return undefined;
    } catch (err) {
      if (!(err instanceof CloudApiError)) throw err;
      if (err.status === 401 || err.status === 403) return `the Hetzner API rejects it (${err.status})`;
      if (err.status === 404) {
        return network !== undefined
          ? `it does not see network ${network} (HCLOUD_NETWORK): a token of another project?`
          : `it does not see server ${server}, one of this cluster's: a token of another project?`;
      }
      throw err;
    }
  }
}

// What tests, tools and the conformance suite use of the rooms inside, through this door.
export { type HcloudConfig, type LoadBalancerDefaults, readHcloudConfig } from "./config.ts";
export { ConfiguredNetwork, type HcloudContext, hcloudContext } from "./context.ts";
export { RecordSeal } from "./record_seal.ts";
export { HcloudInstances } from "./instances/mod.ts";
export {
  annotationsPage,
  KNOWN_ANNOTATIONS,
  OWN_ANNOTATION_REFERENCE,
  parseLoadBalancerSpec,
  POLICY_EXCEPTIONS,
  policyTemplate,
  PREFIX,
  valueKind,
} from "./load_balancers/mod.ts";
export { ServerCache } from "./servers/mod.ts";
export { SERVICE_UID_LABEL, SHARE_LABEL } from "./names.ts";
export { nodePortOpenings } from "./firewall/mod.ts";
export { findResidue, removeResidue, type ResidueItem, type ResidueKind } from "./residue/residue.ts";
export * from "./names.ts";
