/**
 * An in-memory provider for controller tests: real state (instances, balancers, routes), a log of
 * every call, and knobs to inject errors and delays per method.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { type Clock, sleepOn, SYSTEM_CLOCK } from "../../lib/clock.ts";
import type {
  CloudProvider,
  ClusterView,
  DriftReport,
  InstanceMetadata,
  Instances,
  LoadBalancers,
  LoadBalancerStatus,
  ProviderWarning,
  Route,
  Routes,
} from "../provider.ts";
import { LimitReachedError } from "../errors.ts";

/** A machine of the fake cloud. */
export interface FakeInstance extends InstanceMetadata {
  name: string;
  shutdown?: boolean;
  /** Networks routed to the machine beyond its addresses (an IPv6 `/64`), in its record. */
  cidrs?: string[];
}

/**
 * The annotation the fake reads as a balancer's node selector (`key=value`): only Nodes with that
 * label are its targets (the `nodeTargets` capability).
 */
export const FAKE_NODE_SELECTOR = "fake.deno-ccm.io/node-selector";
/** Comma-separated names of TLS Secrets the Service's balancer serves (the `tlsSecrets` capability). */
export const FAKE_TLS_SECRETS = "fake.deno-ccm.io/tls-secrets";
/** The label a Secret needs to be offered to the fake. */
export const FAKE_TLS_LABEL = "fake.deno-ccm.io/tls=true";

/** A balancer of the fake cloud. */
export interface FakeBalancer {
  name: string;
  service: string;
  /** The UID of the Service it serves. */
  uid: string;
  status: LoadBalancerStatus;
  /** Node names it targets. */
  hosts: string[];
  ports: number[];
  /** The TLS Secrets its last ensure was handed: name → resourceVersion (`missing` when absent). */
  secrets: Record<string, string>;
}

/** Method names in the call log (upstream fake's vocabulary). */
export type FakeMethod =
  | "instance-exists"
  | "instance-shutdown"
  | "instance-metadata"
  | "machine-record"
  | "get-load-balancer"
  | "ensure-load-balancer"
  | "update-load-balancer"
  | "ensure-load-balancer-deleted"
  | "sync-nodes"
  | "owners"
  | "drift"
  | "sweep-orphans"
  | "list-routes"
  | "create-route"
  | "delete-route";

/** See the module doc. */
export class FakeProvider implements CloudProvider {
  readonly name = "fake";
  /** Machines by provider ID. */
  readonly machines = new Map<string, FakeInstance>();
  /** Balancers by `namespace/name` of their Service. */
  readonly balancers = new Map<string, FakeBalancer>();
  /** Warnings every ensure reports (e.g. about a Node), for the controller's handling of them. */
  ensureWarnings: ProviderWarning[] = [];
  /** Routes by destination CIDR. */
  readonly routeTable = new Map<string, Route>();
  /** Every call, in order, e.g. `"ensure-load-balancer default/web"`. */
  readonly calls: string[] = [];
  /** An error (or a function deciding one per call) to throw from a method. */
  readonly errors: Partial<Record<FakeMethod, Error | ((subject: string) => Error | undefined)>> = {};
  /** Milliseconds every call waits first. */
  delayMs = 0;
  /** The clock `delayMs` runs on (a test's fake clock, to cost no real time). */
  clock: Clock = SYSTEM_CLOCK;
  /** What `nodeTargets.drainPeriodMs` answers (graceful draining; 0: none). */
  drainMs = 0;
  /** Service UID → differences the next drift look reports (e.g. "port 80 deleted"). */
  readonly drifted = new Map<string, string[]>();
  /** What `inventory.drift` reports as balancers whose every target fails its health check. */
  readonly unhealthy = new Map<string, string>();
  /** What `initialize` was handed. */
  cluster?: ClusterView;
  /** Once aborted (see `fence`), balancer and route writes are refused. */
  #fence?: AbortSignal;
  readonly #cloudListeners: (() => void)[] = [];
  #nextIp = 1;

  /** Remembers the cluster view, as a real provider would. */
  initialize(cluster: ClusterView, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    this.cluster = cluster;
    return Promise.resolve();
  }

  /** Writes after `signal` aborts are refused (a lost lease). */
  fence(signal: AbortSignal): void {
    this.#fence = signal;
  }

  onCloudChanged(listener: () => void): void {
    this.#cloudListeners.push(listener);
  }

  /** Tells the listeners that the cloud changed as a whole (as new credentials would). */
  changeCloud(): void {
    for (const listener of this.#cloudListeners) listener();
  }

  readonly instances: Required<Instances> = {
    instanceExists: async (node, signal) => {
      await this.#enter("instance-exists", nodeName(node), signal);
      return this.#machineOf(node) !== undefined;
    },
    instanceShutdown: async (node, signal) => {
      await this.#enter("instance-shutdown", nodeName(node), signal);
      return this.#machineOf(node)?.shutdown === true;
    },
    machineRecord: async (node, purpose, signal) => {
      // The purpose follows the name (`machine-record web-1 initialize`), as tests assert it.
      await this.#enter("machine-record", purpose ? `${nodeName(node)} ${purpose}` : nodeName(node), signal);
      const m = node.spec?.providerID ? this.machines.get(node.spec.providerID) : undefined;
      if (!m || m.name !== nodeName(node)) return undefined;
      const cidrs = [
        ...m.nodeAddresses.filter((a) => a.type !== "Hostname").map((a) =>
          a.address.includes(":") ? `${a.address}/128` : `${a.address}/32`
        ),
        ...(m.cidrs ?? []),
      ];
      return { providerID: m.providerID, names: [m.name], cidrs };
    },
    instanceMetadata: async (node, _purpose, signal) => {
      await this.#enter("instance-metadata", nodeName(node), signal);
      const m = this.#machineOf(node);
      if (!m) return undefined;
      const { name: _name, shutdown: _s, cidrs: _c, ...meta } = m;
      return structuredClone(meta);
    },
  };

  /** Every capability but the firewall, which a test adds when it wants one (it syncs on its own loop). */
  readonly loadBalancers: Required<Omit<LoadBalancers, "firewall">> & Pick<LoadBalancers, "firewall"> = {
    getLoadBalancer: async (_cluster, service, signal) => {
      await this.#enter("get-load-balancer", serviceKey(service), signal);
      return structuredClone(this.balancers.get(serviceKey(service))?.status);
    },
    getLoadBalancerName: (_cluster, service) =>
      `a${(service.metadata?.uid ?? "").replace(/-/g, "")}`.slice(0, 32),
    // Lookups cost nothing here: nothing to look at before the syncs.
    prefetch: () => Promise.resolve(),
    ensureLoadBalancer: async ({ clusterName: cluster, service, nodes, keep, secrets }, signal) => {
      await this.#enter("ensure-load-balancer", serviceKey(service), signal);
      this.#fenced();
      const selected = selectedBy(service, nodes, keep);
      const existing = this.balancers.get(serviceKey(service));
      const balancer: FakeBalancer = {
        name: this.loadBalancers.getLoadBalancerName(cluster, service),
        service: serviceKey(service),
        uid: service.metadata?.uid ?? "",
        status: existing?.status ?? { ingress: [{ ip: `192.0.2.${this.#nextIp++}`, ipMode: "VIP" }] },
        hosts: selected.map(nodeName).sort(),
        ports: (service.spec?.ports ?? []).map((p) => p.port),
        secrets: Object.fromEntries(
          [...secrets ?? []].map(([n, s]) => [n, s?.version ?? "missing"]),
        ),
      };
      this.balancers.set(balancer.service, balancer);
      return { ...structuredClone(balancer.status), warnings: structuredClone(this.ensureWarnings) };
    },
    updateLoadBalancer: async ({ service, nodes, keep }, signal) => {
      await this.#enter("update-load-balancer", serviceKey(service), signal);
      this.#fenced();
      const balancer = this.balancers.get(serviceKey(service));
      if (balancer) balancer.hosts = selectedBy(service, nodes, keep).map(nodeName).sort();
    },
    ensureLoadBalancerDeleted: async (_cluster, service, signal) => {
      await this.#enter("ensure-load-balancer-deleted", serviceKey(service), signal);
      this.#fenced();
      this.balancers.delete(serviceKey(service));
    },
    nodeTargets: {
      selected: (service, nodes) =>
        service.metadata?.annotations?.[FAKE_NODE_SELECTOR] === undefined
          ? undefined
          : new Set(selectedBy(service, nodes).map(nodeName)),
      sync: async (_cluster, nodes, signal) => {
        await this.#enter("sync-nodes", nodes.map(nodeName).sort().join(","), signal);
      },
      drainPeriodMs: () => this.drainMs,
    },
    tlsSecrets: {
      referenced: (service) =>
        (service.metadata?.annotations?.[FAKE_TLS_SECRETS] ?? "").split(",").map((n) => n.trim()).filter(
          Boolean,
        ),
      label: FAKE_TLS_LABEL,
    },
    inventory: {
      owners: async (expected, signal) => {
        await this.#enter("owners", String(expected), signal);
        return this.#owners();
      },
      drift: async (signal): Promise<DriftReport> => {
        await this.#enter("drift", "", signal);
        const drifted = new Map(this.drifted);
        this.drifted.clear();
        return { owners: this.#owners(), drifted, unhealthy: new Map(this.unhealthy) };
      },
      sweepOrphans: async (live, signal) => {
        await this.#enter("sweep-orphans", [...live].sort().join(","), signal);
        this.#fenced();
        let deleted = 0;
        for (const [key, balancer] of this.balancers) {
          if (live.has(balancer.uid)) continue;
          this.balancers.delete(key);
          deleted++;
        }
        return deleted;
      },
    },
  };

  /**
   * Routes the fake network holds: beyond it `createRoute` throws `LimitReachedError`, as a cloud
   * does. A test that wants the controller told in advance sets `routes.maxRoutes` too.
   */
  routeLimit?: number;

  readonly routes: Omit<Routes, "maxRoutes"> & { maxRoutes?: number } = {
    listRoutes: async (_cluster, signal) => {
      await this.#enter("list-routes", "", signal);
      return [...this.routeTable.values()].map((r) => structuredClone(r));
    },
    createRoute: async (_cluster, _hint, route, signal) => {
      await this.#enter("create-route", route.destinationCIDR, signal);
      this.#fenced();
      if (this.routeLimit !== undefined && this.routeTable.size >= this.routeLimit) {
        throw new LimitReachedError("routes in the fake network", this.routeLimit);
      }
      const machine = [...this.machines.values()].find((m) => m.name === route.targetNode);
      // As Hetzner's: the route goes through the machine's address, and the provider says whose.
      this.routeTable.set(route.destinationCIDR, {
        name: `${route.targetNode}-${route.destinationCIDR}`,
        targetNode: route.targetNode,
        destinationCIDR: route.destinationCIDR,
        blackhole: !machine,
        targetNodeAddresses: route.targetNodeAddresses?.filter((a) => a.type === "InternalIP"),
        gatewayProviderID: machine?.providerID,
      });
    },
    deleteRoute: async (_cluster, route, signal) => {
      await this.#enter("delete-route", route.destinationCIDR, signal);
      this.#fenced();
      this.routeTable.delete(route.destinationCIDR);
    },
  };

  /** Adds a machine; its provider ID defaults to `fake://<name>`. */
  addMachine(
    name: string,
    meta: Partial<InstanceMetadata> & { shutdown?: boolean; cidrs?: string[] } = {},
  ): FakeInstance {
    const machine: FakeInstance = {
      name,
      providerID: meta.providerID ?? `fake://${name}`,
      instanceType: meta.instanceType ?? "fake-small",
      nodeAddresses: meta.nodeAddresses ?? [{ type: "Hostname", address: name }],
      zone: meta.zone ?? "zone-a",
      region: meta.region ?? "region-1",
      additionalLabels: meta.additionalLabels,
      shutdown: meta.shutdown,
      ...(meta.cidrs ? { cidrs: meta.cidrs } : {}),
    };
    this.machines.set(machine.providerID, machine);
    return machine;
  }

  /** Calls of one method (or all), for assertions. */
  callsOf(method?: FakeMethod): string[] {
    return method ? this.calls.filter((c) => c === method || c.startsWith(`${method} `)) : [...this.calls];
  }

  #owners(): Set<string> {
    return new Set([...this.balancers.values()].map((b) => b.uid));
  }

  #fenced(): void {
    if (this.#fence?.aborted) throw new Error("fenced: this process no longer leads");
  }

  #machineOf(node: Node): FakeInstance | undefined {
    const id = node.spec?.providerID;
    if (id) return this.machines.get(id);
    return [...this.machines.values()].find((m) => m.name === nodeName(node));
  }

  /** Records the call; a cancelled caller's call ends (with the signal's reason) instead of acting. */
  async #enter(method: FakeMethod, subject: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.calls.push(subject ? `${method} ${subject}` : method);
    if (this.delayMs > 0) await sleepOn(this.clock, this.delayMs, signal);
    signal?.throwIfAborted();
    const knob = this.errors[method];
    const err = typeof knob === "function" ? knob(subject) : knob;
    if (err) throw err;
  }
}

function nodeName(node: Node): string {
  return node.metadata?.name ?? "";
}

/** The Nodes the Service's balancer targets: those its {@link FAKE_NODE_SELECTOR} matches (or all). */
function selectedBy(service: Service, nodes: Node[], keep?: ReadonlySet<string>): Node[] {
  const selector = service.metadata?.annotations?.[FAKE_NODE_SELECTOR];
  if (selector === undefined) return nodes;
  const [key, value = ""] = selector.split("=");
  return nodes.filter((n) => n.metadata?.labels?.[key] === value || keep?.has(nodeName(n)));
}

function serviceKey(service: Service): string {
  return `${service.metadata?.namespace ?? "default"}/${service.metadata?.name ?? ""}`;
}
