/**
 * The room's door to the contract: each entry point reads the Service once (request.ts) and hands
 * the request to the balancer it concerns: a Service's own (own/own_balancer.ts, as the official CCM),
 * a shared one (`load-balancer-share`) or a co-managed one (`attach-to`) (sharing/); the inventory,
 * the TLS Secrets and the firewall are its optional capabilities.
 *
 * @module
 */
import { withSignal } from "../../../lib/cancellation.ts";
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type {
  ClusterView,
  LoadBalancerFirewall,
  LoadBalancerNodeTargets,
  LoadBalancerResult,
  LoadBalancers,
  LoadBalancerStatus,
  LoadBalancerSync,
  LoadBalancerTlsSecrets,
  ProviderWarning,
} from "../../provider.ts";
import { ProviderError } from "../../errors.ts";
import type { HcloudClient } from "../../../hcloud_api/mod.ts";
import { defaultLoadBalancerName, type LoadBalancerDefaults, tlsSecretNames } from "./spec/mod.ts";
import { ServiceReader, type ServiceRequest, usableSpec } from "./core/request.ts";
import { ingressOf } from "./core/desired.ts";
import { LbCertificates } from "./certificates/mod.ts";
import { LbLookup } from "./own/lookup.ts";
import { BalancerTraffic, ClusterInventory, type DriftRecord, TargetHealthGauge } from "./inventory/mod.ts";
import { asksForNodePorts, HcloudFirewall } from "../firewall/mod.ts";
import { deleteServiceBalancer, type DeletionParts } from "./deletion.ts";
import { CatalogCache } from "./core/catalog_cache.ts";
import { drainPeriodMs, LbTargets, type RobotTargetContext } from "./targets/mod.ts";
import { ServerLabeler } from "../servers/mod.ts";
import type { HcloudContext } from "../context.ts";
import { parseLabelSelector } from "../../../lib/label_selector.ts";
import {
  CoManagedBalancers,
  findCoManaged,
  SharedBalancers,
  sharedName,
  SharingSync,
} from "./sharing/mod.ts";
import { ExternalObjectConsent } from "./core/consent.ts";
import { TLS_SECRET_LABEL } from "../names.ts";
import type { Registry } from "../../../lib/metrics.ts";
import { ServicePorts } from "./certificates/mod.ts";
import { ClusterFacts } from "./core/cluster_facts.ts";
import { refusalCompanions, typeUnconfigured } from "./core/ensure_warnings.ts";
import { type EnsureState, OwnBalancers } from "./own/own_balancer.ts";

export { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "./core/labels.ts";

/** See the module doc. */
export class HcloudLoadBalancers implements LoadBalancers {
  readonly #client: HcloudClient;
  readonly #defaults: LoadBalancerDefaults;
  /** Each version of a Service parsed once, whichever entry point asks (request.ts). */
  readonly reader: ServiceReader;
  readonly #certificates: LbCertificates;
  readonly #catalog: CatalogCache;
  readonly #labeler: ServerLabeler;
  /** The cluster served, learnt once (useCluster) and handed to every collaborator at construction. */
  readonly #facts = new ClusterFacts();
  readonly #lookup: LbLookup;
  readonly #robot: RobotTargetContext;
  readonly #targets: LbTargets;
  /** What the last successful sync asked of each balancer (by ID), for drift repair. */
  readonly #asked = new Map<number, DriftRecord>();
  /** A Service's ports and the certificates they serve (certificates/ports.ts). */
  readonly #ports: ServicePorts;
  /** A Service's own balancer (own/own_balancer.ts). */
  readonly #own: OwnBalancers;
  /** A Service's sync on a shared or co-managed balancer (sharing/). */
  readonly #sharing: SharingSync;
  /** Balancers made outside Kubernetes that Services are attached to (`attach-to`). */
  readonly #coManaged: CoManagedBalancers;
  /** Who may name objects made outside the CCM (consent.ts). */
  readonly #consent: ExternalObjectConsent;
  /** Balancers shared by the Services of a namespace (`load-balancer-share`). */
  readonly #shared: SharedBalancers;
  /** Label-selector targets: which Nodes a balancer takes, and the server labels they follow. */
  readonly nodeTargets: LoadBalancerNodeTargets = {
    selected: (service, nodes) => this.selectedNodeNames(service, nodes),
    sync: (cluster, nodes, signal) => this.syncNodes(cluster, nodes, signal),
    drainPeriodMs: () => drainPeriodMs(this.#defaults),
  };
  /** Certificates from TLS Secrets, when the operator lets the CCM read them (tls_secrets.ts). */
  readonly tlsSecrets?: LoadBalancerTlsSecrets;
  /** One list of this cluster's balancers (its cluster label) per question (cluster_inventory.ts). */
  readonly inventory: ClusterInventory;
  /** The firewall whose rules follow the balancers, when the operator names one (firewall/). */
  readonly firewall?: LoadBalancerFirewall;
  /** What deleting a Service's balancer works with (deletion.ts). */
  readonly #deletion: DeletionParts;

  /** `registry`: where the targets' health (from each drift list) is counted. */
  constructor(ctx: HcloudContext, defaults: LoadBalancerDefaults, registry?: Registry) {
    this.#robot = { enabled: ctx.robotEnabled, servers: ctx.robot };
    this.#labeler = new ServerLabeler(ctx.client, ctx.cache);
    this.#client = ctx.client;
    this.#defaults = defaults;
    this.reader = new ServiceReader(defaults, () => ctx.network.id !== undefined);
    this.#consent = new ExternalObjectConsent(defaults.externalObjectsNamespaces);
    this.#certificates = new LbCertificates(ctx.client, ctx.actions, this.#facts, this.#consent);
    this.#catalog = new CatalogCache(ctx.client, undefined, () => ctx.clock.now());
    this.#targets = new LbTargets(ctx.client, ctx.actions, this.#robot);
    this.#lookup = new LbLookup(ctx.client, this.#facts, this.#consent, () => ctx.clock.now());
    this.#coManaged = new CoManagedBalancers(ctx, this.#labeler, this.#facts, this.#consent);
    this.#shared = new SharedBalancers(ctx, this.#labeler, this.#catalog, this.#facts);
    this.#ports = new ServicePorts(this.#certificates, this.#facts);
    this.#sharing = new SharingSync({
      catalog: this.#catalog,
      ports: this.#ports,
      shared: this.#shared,
      coManaged: this.#coManaged,
    });
    this.#own = new OwnBalancers({
      client: ctx.client,
      actions: ctx.actions,
      network: ctx.network,
      catalog: this.#catalog,
      labeler: this.#labeler,
      lookup: this.#lookup,
      consent: this.#consent,
      targets: this.#targets,
      robot: this.#robot,
      ports: this.#ports,
      facts: this.#facts,
      asked: this.#asked,
    });
    this.#deletion = {
      client: ctx.client,
      facts: this.#facts,
      shared: this.#shared,
      coManaged: this.#coManaged,
      certificates: this.#certificates,
      lookup: this.#lookup,
      asked: this.#asked,
    };
    // Signs that the firewall changed outside the CCM, from what is read anyway (see below).
    const firewallPokes: (() => void)[] = [];
    const pokeFirewall = () => firewallPokes.forEach((poke) => poke());
    this.inventory = new ClusterInventory({
      onUnhealthy: pokeFirewall,
      client: ctx.client,
      facts: this.#facts,
      labeler: this.#labeler,
      shared: this.#shared,
      coManaged: this.#coManaged,
      asked: this.#asked,
      appliedIps: this.#robot.enabled ? this.#targets.appliedIps : undefined,
      health: registry && new TargetHealthGauge(registry),
      traffic: registry && defaults.trafficMetrics
        ? new BalancerTraffic(ctx.client, registry, () => ctx.clock.now())
        : undefined,
      tls: defaults.tlsSecrets ? this.#certificates.tls : undefined,
      now: () => ctx.clock.now(),
    });
    if (defaults.firewall) {
      const nodePorts = defaults.firewallNodePortNamespaces;
      const firewall = new HcloudFirewall(
        ctx.client,
        defaults.firewall,
        () => this.#facts.clusterId(),
        nodePorts && { services: () => this.#facts.services(), namespaces: nodePorts },
        () => this.#coManaged.owned(),
      );
      // No periodic read (steady state: 0 calls): the server action logs the cache reads name the
      // firewall when its rules change (projects over two pages of servers), and a balancer's
      // failing health checks, seen in the drift list, are what a removed rule does everywhere.
      ctx.cache.onLogged((news) => ("gap" in news || firewall.named(news.resources)) && pokeFirewall());
      this.firewall = {
        sync: (signal, options) => withSignal(signal, () => firewall.sync(options?.balancersUnchanged)),
        watch: (poke) => firewallPokes.push(poke),
        // Every Service asking is followed (a refusal is news too), not only those allowed.
        concerns: (service) => asksForNodePorts(service),
      };
    }
    if (defaults.tlsSecrets) {
      this.tlsSecrets = {
        referenced: (service) => tlsSecretNames(this.reader.read(service).spec),
        label: `${TLS_SECRET_LABEL}=true`,
      };
    }
  }

  getLoadBalancerName(_cluster: string, service: Service): string {
    const { spec } = this.reader.read(service);
    if (spec.name) return spec.name;
    return spec.share
      ? sharedName(service.metadata?.namespace ?? "default", spec.share, this.#facts.clusterId() ?? "")
      : defaultLoadBalancerName(service);
  }

  async prefetch(services: Service[], signal?: AbortSignal): Promise<void> {
    await withSignal(signal, () => this.#lookup.prefetch(services));
  }

  async getLoadBalancer(
    _cluster: string,
    service: Service,
    signal?: AbortSignal,
  ): Promise<LoadBalancerStatus | undefined> {
    return await withSignal(signal, async () => {
      const { spec } = this.reader.read(service);
      // A co-managed balancer carries no owner label: it is the one attach-to names.
      const lb = spec.share
        ? await this.#shared.find(service, spec.share)
        : spec.attachTo
        ? await findCoManaged(this.#client, spec.attachTo)
        : await this.#lookup.findByUid(service);
      if (!lb) return undefined;
      return { ingress: ingressOf(lb, spec) };
    });
  }

  async ensureLoadBalancer(sync: LoadBalancerSync, signal?: AbortSignal): Promise<LoadBalancerResult> {
    const req = this.reader.request(sync);
    return await withSignal(signal, async () => {
      const unconfigured = typeUnconfigured(req, this.#defaults);
      try {
        const result = await this.#ensure(req);
        return { ...result, warnings: [...unconfigured, ...result.warnings ?? []] };
      } catch (err) {
        throw ProviderError.with(err, {
          warnings: [...unconfigured, ...refusalCompanions(req.service, req)],
        });
      }
    });
  }

  /**
   * Syncs; a failure that leaves the Service without a balancer of its own (none found and none
   * made, or the name refused) is marked so, and the controller stops advertising old addresses.
   */
  async #ensure(req: ServiceRequest): Promise<LoadBalancerResult> {
    const state = { lookedUp: false, found: false };
    try {
      return await this.#ensureFound(req, state);
    } catch (err) {
      throw state.lookedUp && !state.found ? ProviderError.with(err, { leftNoBalancer: true }) : err;
    }
  }

  async #ensureFound(
    req: ServiceRequest,
    state: EnsureState,
  ): Promise<LoadBalancerResult> {
    const spec = usableSpec(req);
    if (spec.share) return await this.#sharing.shared(req);
    // It served on a shared balancer: it leaves that first (a port it takes along is free again).
    const left = await this.#sharing.leaveShared(req.service);
    const result = await this.#ensureUnshared(req, state);
    return left ? { ...result, annotations: { ...result.annotations, ...left } } : result;
  }

  async #ensureUnshared(req: ServiceRequest, state: EnsureState): Promise<LoadBalancerResult> {
    if (req.spec.attachTo) return await this.#sharing.coManaged(req);
    return await this.#own.ensure(req, this.getLoadBalancerName(req.clusterName, req.service), state);
  }

  /**
   * The cluster served (from the provider's `initialize`): its identity labels what is created (and
   * without it nothing is swept), its Services tell a live owner from a gone one.
   */
  useCluster(cluster: ClusterView): void {
    this.#facts.learn(cluster);
  }

  /** Labels the eligible servers once for every label-selector load balancer. */
  async syncNodes(_cluster: string, nodes: Node[], signal?: AbortSignal): Promise<void> {
    return await withSignal(signal, async () => {
      const clusterId = this.#facts.clusterId();
      if (clusterId) await this.#labeler.sync(clusterId, nodes);
    });
  }

  async updateLoadBalancer(
    sync: LoadBalancerSync,
    signal?: AbortSignal,
  ): Promise<{ warnings: ProviderWarning[]; updated?: boolean }> {
    const req = this.reader.request(sync);
    return await withSignal(signal, async () => {
      const spec = usableSpec(req);
      // Co-managed and shared balancers target this cluster's label selector, which follows the labels.
      if (spec.attachTo || spec.share) return { warnings: [], updated: false };
      return await this.#own.update(req, this.getLoadBalancerName(req.clusterName, req.service));
    });
  }

  /** See {@link LoadBalancerNodeTargets.selected}. */
  selectedNodeNames(service: Service, nodes: Node[]): Set<string> | undefined {
    const { spec } = this.reader.read(service);
    if (!spec.nodeSelector) return undefined;
    let selector;
    try {
      selector = parseLabelSelector(spec.nodeSelector);
    } catch {
      return undefined; // reported by the ensure that rejected it
    }
    return new Set(
      nodes.filter((n) => selector.matches(n.metadata?.labels ?? {})).map((n) => n.metadata!.name!),
    );
  }

  async ensureLoadBalancerDeleted(
    _cluster: string,
    service: Service,
    signal?: AbortSignal,
  ): Promise<void | { annotations?: Record<string, null>; outcome?: string }> {
    this.#ports.forget(service);
    return await withSignal(
      signal,
      () => deleteServiceBalancer(this.#deletion, service, this.reader.read(service).spec),
    );
  }
}
