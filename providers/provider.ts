/**
 * The provider interface: what a cloud must offer for the four controllers. It mirrors the
 * upstream `k8s.io/cloud-provider` contracts (InstancesV2, LoadBalancer, Routes), each part
 * optional, so anyone running their own IaaS can implement it from this file alone.
 *
 * Each part has a core (upstream's methods) and may offer named optional capabilities (e.g.
 * {@link LoadBalancers.inventory}); a missing capability switches off only what needs it.
 *
 * Rules for implementers:
 * - "Not found" is a value (`undefined`, `false`), never an error.
 * - Throw {@link RetryAfterError} to be retried after a fixed delay, {@link TerminalError} when
 *   retrying cannot help until the input changes, anything else to be retried with backoff.
 * - Treat the Kubernetes objects passed in as read-only.
 * - Cloud API calls are scarce: serve many lookups from one list and cache within a max age.
 * - Every method that may call the cloud takes the caller's `signal` last (Go's `ctx`): once it
 *   aborts (SIGTERM, a lost lease), end the calls under way and start no new ones. Callers always
 *   pass it; a provider may ignore it.
 *
 * @module
 */
import type { Node, NodeAddress, Service, Taint } from "kubernetes-types/core/v1.d.ts";
export { ProviderError, RetryAfterError, TerminalError, WrappedError } from "./errors.ts";
import type { TlsSecret } from "./tls_secret.ts";
import type { ProviderWarning } from "./warning.ts";
export type { ProviderWarning } from "./warning.ts";
export { TlsSecret } from "./tls_secret.ts";
/** The Kubernetes types the contract passes (from `kubernetes-types`), for implementers. */
export type { Node, NodeAddress, Service, Taint };

/** What the node controller writes onto a Node (upstream `InstanceMetadata`). */
export interface InstanceMetadata {
  /** e.g. `hcloud://123`; set on `spec.providerID` when empty. */
  providerID: string;
  /** `node.kubernetes.io/instance-type` (and the beta twin). */
  instanceType: string;
  /** `status.addresses`, in the provider's order. */
  nodeAddresses: NodeAddress[];
  /** Problems worth a Warning event on the Node (the Node is still initialized). */
  warnings?: ProviderWarning[];
  /** `topology.kubernetes.io/zone` (and the beta twin); omitted when empty. */
  zone?: string;
  /** `topology.kubernetes.io/region` (and the beta twin); omitted when empty. */
  region?: string;
  /** Extra labels; keys under `kubernetes.io`/`k8s.io` are ignored by the node controller. */
  additionalLabels?: Record<string, string>;
  /**
   * Labels kept in step on initialized Nodes at every address refresh (e.g. from the machine's own
   * labels): written, updated, and removed when gone; a label the CCM did not write is never touched.
   * Every key starts with `prefix` (e.g. `server.hetzner.cloud/`), the only keys the node controller
   * ever writes or removes for it; absent: no label sync (nothing written or removed).
   */
  syncedLabels?: { prefix: string; labels: Record<string, string> };
  /**
   * Taints kept in step the same way (e.g. from the machine's labels): set with the Node's
   * initialization, before the uninitialized taint goes, then updated and removed at every address
   * refresh. Every key starts with `prefix`; a taint the CCM did not write is never touched; absent:
   * no taint sync.
   */
  syncedTaints?: { prefix: string; taints: Taint[] };
  /**
   * Taints set once, in the write that initializes the Node, and never put back or removed after
   * (an agent lifts them when the Node is ready for work: Scaleway's startup taints). A key the Node
   * already has, or a synced taint's, is left alone.
   */
  startupTaints?: Taint[];
}

/** Instances: finding the machine behind a Node. Should check `node.spec.providerID` first. */
export interface Instances {
  /** False when the machine is gone for good (the Node is then deleted). Errors never delete. */
  instanceExists(node: Node, signal?: AbortSignal): Promise<boolean>;
  /** True when the machine exists but is powered off (the Node gets the shutdown taint). */
  instanceShutdown(node: Node, signal?: AbortSignal): Promise<boolean>;
  /**
   * The Node's metadata, or `undefined` when no machine matches it (the Node stays tainted).
   * `purpose` says how fresh the answer must be: `initialize` needs a machine list newer than the
   * Node only (type, location and addresses do not change under a joining Node, so a burst of
   * joins can share one list); `refresh` (the default) wants current addresses.
   */
  instanceMetadata(
    node: Node,
    purpose?: MetadataPurpose,
    signal?: AbortSignal,
  ): Promise<InstanceMetadata | undefined>;
  /**
   * Optional capability: the cloud's own record of the machine behind an initialized Node, found by
   * `node.spec.providerID` alone and holding nothing the Node says about itself (no annotation, no
   * kubelet address): what the kubelet-serving CSR approver checks a request's names against, and
   * where node IPAM finds a machine's IPv6 range. `undefined` when no machine of this provider has
   * that ID, or its name no longer is the Node's. `purpose` as for `instanceMetadata`: `initialize`
   * accepts any list newer than the Node that is at most minutes old (a machine's ranges do not change
   * under a joining Node, and a list the node controller already read serves), `refresh` (the
   * default) wants a current one.
   */
  machineRecord?(
    node: Node,
    purpose?: MetadataPurpose,
    signal?: AbortSignal,
  ): Promise<MachineRecord | undefined>;
}

/** See {@link Instances.machineRecord}. */
export interface MachineRecord {
  /** The machine's provider ID (the Node's). */
  providerID: string;
  /** DNS names the cloud knows the machine by (its name). */
  names: string[];
  /** Addresses and networks the cloud routes to the machine (`203.0.113.7/32`, `2001:db8:1::/64`). */
  cidrs: string[];
  /**
   * Those of `cidrs` that another machine may hold too (private networks that can overlap): an
   * address among them that another Node reports is refused.
   */
  sharedCidrs?: string[];
  /**
   * What the operator can do so that no address of the machine is shared (said with a refusal that
   * `sharedCidrs` caused), in the provider's terms: e.g. the setting that names the cluster's network.
   */
  sharedCidrsAdvice?: string;
}

/** Why the node controller asks for metadata (see {@link Instances.instanceMetadata}). */
export type MetadataPurpose = "initialize" | "refresh";

/** One `status.loadBalancer.ingress` entry. */
export interface LoadBalancerIngress {
  /** An address of the balancer. */
  ip?: string;
  /** A DNS name of the balancer (instead of addresses). */
  hostname?: string;
  /** `Proxy` when the balancer does not preserve the destination (e.g. PROXY protocol). */
  ipMode?: "VIP" | "Proxy";
}

/** The status a load balancer reports for its Service. */
export interface LoadBalancerStatus {
  /** Where the Service is reachable, written to `status.loadBalancer.ingress`. */
  ingress: LoadBalancerIngress[];
}

/** What {@link LoadBalancerInventory.drift} found: the owners (Service UIDs) of the balancers that exist, and drifted ones. */
export interface DriftReport {
  /** The UIDs of the Services whose balancers exist. */
  owners: Set<string>;
  /** Service UID → what differs, in words ("service on port 80 deleted"). */
  drifted: Map<string, string[]>;
  /**
   * Service UID → why every target of its balancer fails the health check, in words (a check the
   * Nodes do not serve, say): said on the Service once each time it starts (no silent outage).
   */
  unhealthy?: Map<string, string>;
}

/** What ensure/update return: the status (ensure only) and warnings to record as events. */
export interface LoadBalancerResult extends LoadBalancerStatus {
  /**
   * Small state the provider keeps on the Service (written with its status when it differs; `null`
   * removes a key), e.g. what the Service owns on a balancer it shares.
   */
  annotations?: Record<string, string | null>;
  /** Recorded as Warning events on the Service (or the Node each names). */
  warnings?: ProviderWarning[];
}

/** Load balancers for Services of type LoadBalancer. */
export interface LoadBalancers {
  /**
   * Optional: the current status, or `undefined` when no balancer exists for the Service. The
   * controllers do not need it (ensure and delete look the balancer up themselves); tools may.
   */
  getLoadBalancer?(
    clusterName: string,
    service: Service,
    signal?: AbortSignal,
  ): Promise<LoadBalancerStatus | undefined>;
  /** The balancer's name in the cloud (default: `"a"` + UID without dashes, 32 characters). */
  getLoadBalancerName(clusterName: string, service: Service): string;
  /**
   * Optional: one look at the balancers of many Services before their syncs (a start syncs every
   * Service), so the syncs that follow need not each look their balancer up. Only ever saves requests:
   * what it cannot answer is looked up as without it.
   */
  prefetch?(services: Service[], signal?: AbortSignal): Promise<void>;
  /** Creates or updates the balancer so it serves `sync.service` on `sync.nodes`; returns its status. */
  ensureLoadBalancer(sync: LoadBalancerSync, signal?: AbortSignal): Promise<LoadBalancerResult>;
  /**
   * Updates only the targets after the node set changed. A missing balancer is not an error.
   * `updated: false` says nothing was there to update (no event is recorded then). The controller
   * hands no `secrets` here.
   */
  updateLoadBalancer(
    sync: LoadBalancerSync,
    signal?: AbortSignal,
  ): Promise<void | { warnings?: ProviderWarning[]; updated?: boolean }>;
  /**
   * Deletes the balancer (or what the Service owns on it); succeeds when it is already gone. May
   * return annotations to write on the Service, as `ensureLoadBalancer` does, and `outcome`: what
   * happened in words when the balancer was not simply deleted (a shared or co-managed balancer that
   * stays, delete protection), for the `DeletedLoadBalancer` event.
   */
  ensureLoadBalancerDeleted(
    clusterName: string,
    service: Service,
    signal?: AbortSignal,
  ): Promise<void | { annotations?: Record<string, string | null>; outcome?: string }>;
  /**
   * Optional capability: balancers that target some of the eligible Nodes (a node selector, say) or
   * need work shared by all balancers when the node set changes.
   */
  readonly nodeTargets?: LoadBalancerNodeTargets;
  /**
   * Optional capability: one look at all of this cluster's balancers, so balancers deleted, changed
   * or left behind outside the CCM are found without a call per Service.
   */
  readonly inventory?: LoadBalancerInventory;
  /** Optional capability: certificates from the cluster's TLS Secrets (see {@link LoadBalancerSync.secrets}). */
  readonly tlsSecrets?: LoadBalancerTlsSecrets;
  /** Optional capability: a cloud firewall whose rules follow the balancers (see {@link LoadBalancerFirewall}). */
  readonly firewall?: LoadBalancerFirewall;
}

/**
 * A cloud firewall whose rules let the balancers reach the Nodes (and only what they send to). The
 * controller asks for a sync after balancers may have changed, and — with `balancersUnchanged` when
 * no LoadBalancer Service changed since (the provider may then skip looking at them) — when the
 * provider's `watch` pokes it, or once per drift period when the provider has no `watch`;
 * `changed` says whether rules were written, `rules` how many the CCM keeps.
 */
export interface LoadBalancerFirewall {
  /** Brings the rules in step; `balancersUnchanged`: no LoadBalancer Service changed since the last sync. */
  sync(
    signal?: AbortSignal,
    options?: { balancersUnchanged?: boolean },
  ): Promise<FirewallSync>;
  /**
   * Registers `poke`, which the provider calls when it sees a sign that the firewall changed outside
   * the CCM in what it reads anyway; a provider with `watch` is then not checked periodically.
   */
  watch?(poke: () => void): void;
  /**
   * Whether a Service that is not of type LoadBalancer matters to the firewall too (a NodePort
   * Service opening its ports): its changes then ask for a sync. Absent: none does.
   */
  concerns?(service: Service): boolean;
}

/** What a firewall sync did. */
export interface FirewallSync {
  /** Whether rules were written. */
  changed: boolean;
  /** How many rules the CCM keeps. */
  rules: number;
  /**
   * Services whose request was refused (`namespace/name`), each with a message naming the field and
   * value: the controller records it on the Service. The other Services' rules were written.
   */
  refused?: { service: string; message: string }[];
  /** What the operator should know of the firewall itself (it protects nothing yet, say): logged when it changes. */
  notice?: string;
  /** Balancers the firewall has no room for (their addresses are not allowed; the others' rules were written). */
  leftOut?: string[];
}

/**
 * One sync of a Service's balancer: everything ensure and update work from, in one object, so a
 * provider reads the Service once per sync and the signal stays the last argument.
 */
export interface LoadBalancerSync {
  /** `--cluster-name`. */
  clusterName: string;
  /** The Service (read-only; the informer's object, the same for every call of one sync). */
  service: Service;
  /** The eligible Nodes (those the balancer may target), read-only. */
  nodes: Node[];
  /**
   * Names of Nodes among `nodes` that the balancer keeps as targets although its own selection (a
   * node selector, see {@link LoadBalancerNodeTargets.selected}) no longer admits them: they left
   * it less than {@link LoadBalancerNodeTargets.drainPeriodMs} ago and are draining. Only given to
   * providers with that capability.
   */
  keep?: ReadonlySet<string>;
  /**
   * The TLS Secrets the Service names ({@link LoadBalancerTlsSecrets.referenced}), by name in its
   * namespace: `undefined` for one that does not exist (or is not offered to the CCM). Only given to
   * providers with that capability, and only to `ensureLoadBalancer`.
   */
  secrets?: ReadonlyMap<string, TlsSecret | undefined>;
}

/** See {@link LoadBalancers.tlsSecrets}. */
export interface LoadBalancerTlsSecrets {
  /** The names of the Secrets (in the Service's namespace) whose certificates its balancer serves. */
  referenced(service: Service): string[];
  /**
   * The label a Secret must carry (`key=value`) to be offered: the Secret owner's consent, and what
   * the controller's watch selects, so a cluster's other Secrets are neither read nor held.
   */
  readonly label: string;
}

/** See {@link LoadBalancers.nodeTargets}. */
export interface LoadBalancerNodeTargets {
  /**
   * The names of the Nodes among `nodes` (the eligible ones) that the Service's balancer targets.
   * With it, a Node change (its labels, say) updates only the balancers whose targets it changes.
   * `undefined`: all of `nodes`. Without the capability, a label change updates no balancer and a
   * node-set change updates every balancer.
   */
  selected(service: Service, nodes: Node[]): Set<string> | undefined;
  /**
   * Called once per change of the eligible node set, before `updateLoadBalancer` for each Service,
   * for work shared by all balancers (e.g. labelling the servers a label-selector target picks up).
   */
  sync(clusterName: string, nodes: Node[], signal?: AbortSignal): Promise<void>;
  /**
   * Optional: how long (ms) balancers keep a Node that left the eligible set (the exclude label, the
   * autoscaler's taint, deletion) or a balancer's selection (`selected`) among their targets, so
   * their health checks fail it and open connections finish before it goes. One period for all
   * (balancers may share targets, as a label selector does), at most 10 minutes. 0 or absent:
   * removed at once (upstream).
   */
  drainPeriodMs?(): number;
}

/**
 * See {@link LoadBalancers.inventory}. Each method is one look at the cloud at most; a provider
 * that cannot tell (no cluster identity, say) answers `undefined` (or 0 deleted).
 */
export interface LoadBalancerInventory {
  /**
   * The UIDs of the Services whose balancers exist now, so balancers deleted outside the CCM are
   * recreated. `expected` is how many should exist; `undefined` when a cheap count shows none is
   * missing.
   */
  owners(expected: number, signal?: AbortSignal): Promise<Set<string> | undefined>;
  /**
   * Drift repair: which Services' balancers exist (as `owners`), and whose balancer differs from
   * what its last successful sync asked for (changed in the console, say), with the differences in
   * words; the controller syncs those again.
   */
  drift(signal?: AbortSignal): Promise<DriftReport | undefined>;
  /**
   * Deletes balancers this cluster created ({@link ClusterView.clusterId}) whose Service no longer
   * exists; `liveServiceUids` are the UIDs of Services that want one. Catches creates that
   * completed after a crash. Returns how many were deleted.
   */
  sweepOrphans(liveServiceUids: Set<string>, signal?: AbortSignal): Promise<number>;
}

/** A route of the pod network (upstream `cloudprovider.Route`). */
export interface Route {
  /** Provider-chosen name, unique per route. */
  name: string;
  /** Node name the route sends traffic to ("" when unknown). */
  targetNode: string;
  /** The Node's addresses (on create), so the provider can pick the gateway. */
  targetNodeAddresses?: NodeAddress[];
  /** The pod CIDR the route carries. */
  destinationCIDR: string;
  /** The gateway belongs to no known machine. */
  blackhole?: boolean;
  /**
   * The provider ID of the machine that holds the gateway address, when the provider knows it: the
   * route controller never deletes or displaces a route through a machine that is none of the
   * cluster's Nodes (another cluster's, in one network with an overlapping cluster CIDR).
   */
  gatewayProviderID?: string;
}

/** Pod CIDR routes in the cloud network. */
export interface Routes {
  /** Every route of the network, including ones this cluster does not own. */
  listRoutes(clusterName: string, signal?: AbortSignal): Promise<Route[]>;
  /** Creates (or replaces) the route to `route.targetNode`. */
  createRoute(clusterName: string, nameHint: string, route: Route, signal?: AbortSignal): Promise<void>;
  /** Deletes the route; succeeds when it is already gone. */
  deleteRoute(clusterName: string, route: Route, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: why no route can point at this Node (say, a machine outside the provider's network);
   * such Nodes are skipped with an event instead of failing every run.
   */
  unroutable?(node: Node): string | undefined;
  /**
   * Optional: the most routes the network holds, everyone's together. The controller creates no
   * route beyond it (and one that fails with `LimitReachedError` tells it the same), reporting the
   * Nodes left without one instead of retrying.
   */
  readonly maxRoutes?: number;
}

/** What a provider may read of the cluster it serves (upstream hands a client builder; we hand less). */
export interface ClusterView {
  /**
   * Unique per cluster (the kube-system namespace's UID), to tag what the provider creates so a
   * sweep finds this cluster's leftovers and no other's; `undefined` when it could not be read.
   */
  readonly clusterId?: string;
  /**
   * The Services the CCM knows now (every type), e.g. to tell whether the owner of a cloud object
   * still exists. Absent (a tool, say): the provider must take every owner to be alive.
   */
  services?(): readonly Service[];
}

/**
 * A cloud. Missing parts switch the matching controllers off.
 *
 * @example A provider whose machines are a fixed list (instances only)
 * ```ts
 * import type { CloudProvider, InstanceMetadata, Node } from "./provider.ts";
 *
 * const machines = new Map<string, InstanceMetadata>([
 *   ["web-1", { providerID: "mycloud://1", instanceType: "m1", nodeAddresses: [] }],
 * ]);
 * const provider: CloudProvider = {
 *   name: "mycloud",
 *   instances: {
 *     instanceExists: (node: Node) => Promise.resolve(machines.has(node.metadata?.name ?? "")),
 *     instanceShutdown: () => Promise.resolve(false),
 *     instanceMetadata: (node: Node) => Promise.resolve(machines.get(node.metadata?.name ?? "")),
 *   },
 * };
 * const meta = await provider.instances!.instanceMetadata({ metadata: { name: "web-1" } });
 * if (meta?.providerID !== "mycloud://1") throw new Error("the example is wrong");
 * ```
 */
export interface CloudProvider {
  /** `--cloud-provider` name, e.g. `hcloud`. */
  readonly name: string;
  /** Node initialization and lifecycle; without it the node controllers are off. */
  readonly instances?: Instances;
  /** Services of type LoadBalancer; without it the service controller is off. */
  readonly loadBalancers?: LoadBalancers;
  /** Pod network routes; without it the route controller is off. */
  readonly routes?: Routes;
  /**
   * Why a part is missing, in the operator's terms (the setting that turns it on), said when the
   * controllers that need it are off: the controllers know no provider's settings.
   */
  readonly absent?: {
    readonly instances?: string;
    readonly loadBalancers?: string;
    readonly routes?: string;
  };
  /**
   * A further address where `/metrics` is expected (the official Hetzner CCM's `HCLOUD_METRICS_ADDRESS`,
   * `:8233`), served next to `--secure-port`.
   */
  readonly metricsAddress?: { hostname: string; port: number };
  /** Why the cloud cannot be used right now (e.g. rejected credentials), for `/readyz`. */
  problem?(): string | undefined;
  /**
   * Runs once before the controllers start (e.g. checks credentials); errors are retried. `cluster`
   * is the provider's read-only view of the cluster it serves, valid for the process's lifetime.
   */
  initialize?(cluster: ClusterView, signal: AbortSignal): Promise<void>;
  /**
   * Optional: calls `listener` when what the provider sees of the cloud may have changed as a whole
   * (new credentials in use, or the cloud accepting them again). The service controller then retries
   * the Services waiting out a failure's backoff and checks every balancer with one look.
   */
  onCloudChanged?(listener: () => void): void;
  /**
   * Optional: the signal of this process's leadership. Once it aborts, the provider sends no more
   * cloud writes (and ends waits), even for calls already under way.
   */
  fence?(signal: AbortSignal): void;
  /** Releases timers and connections. */
  close?(): void;
}
