/**
 * Hetzner load balancers for Services, compatible with the official CCM: found by the label
 * `hcloud-ccm/service-uid`, else adopted by name; created with services, targets and network in
 * one request; afterwards only differences are applied, each action awaited (a busy load balancer
 * answers `locked`).
 *
 * @module
 */
import { drainPeriodMs } from "./draining.ts";
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
import { ProviderError, rootCause, TerminalError } from "../../errors.ts";
import type { ActionWaiter, HcloudClient, Schemas } from "../../../hcloud_api/mod.ts";
import type { LoadBalancerDefaults } from "./spec/mod.ts";
import { defaultLoadBalancerName, earliestStage, HccmStage, type LoadBalancerSpec } from "./spec/mod.ts";
import { ServiceReader, type ServiceRequest, usableSpec } from "./request.ts";
import {
  desiredServerIds,
  type DesiredService,
  desiredServices,
  ingressOf,
  unsupportedPorts,
} from "./desired.ts";
import { LbCertificates } from "./certificates.ts";
import { checkServiceFields } from "./service_fields.ts";
import { LbLookup } from "./lookup.ts";
import { ClusterInventory } from "./cluster_inventory.ts";
import { HcloudFirewall } from "../firewall/mod.ts";
import { deleteServiceBalancer, type DeletionParts } from "./deletion.ts";
import { CatalogCache } from "./catalog_cache.ts";
import { primaryIpWarnings } from "./primary_ips.ts";
import { type RobotTargetContext, robotTargetIps } from "./robot_targets.ts";
import { LbTargets, selectedNodes, warnTooManyTargets } from "./targets.ts";
import { checkCatalog, checkServiceLimit } from "./catalog_checks.ts";
import { createLoadBalancer, reconcileNetwork } from "./create.ts";
import { ServerLabeler } from "../servers/mod.ts";
import type { ConfiguredNetwork, HcloudContext } from "../context.ts";
import { parseLabelSelector } from "../../../lib/label_selector.ts";
import { type LbAction, ownerLabels, planExposure, planServices, planShape } from "./plan.ts";
import { executeLbAction } from "./actions.ts";
import type { DriftRecord } from "./drift.ts";
import { CoManagedBalancers, findCoManaged } from "./co_managed.ts";
import { ExternalObjectConsent } from "./consent.ts";
import { identityLabels } from "./labels.ts";
import { LB_ANNOTATION_PREFIX, TLS_SECRET_LABEL } from "../names.ts";
import { SHARED_STATE, SharedBalancers } from "./shared.ts";
import { sharedName } from "./shared_record.ts";
import { tlsSecretNames } from "./spec/mod.ts";
import { TargetHealthGauge } from "./target_health.ts";
import type { Registry } from "../../../lib/metrics.ts";

type LB = Schemas["load_balancer"];

export { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "./labels.ts";

/** See the module doc. */
export class HcloudLoadBalancers implements LoadBalancers {
  readonly #client: HcloudClient;
  readonly #actions: ActionWaiter;
  readonly #defaults: LoadBalancerDefaults;
  /** Each version of a Service parsed once, whichever entry point asks (request.ts). */
  readonly reader: ServiceReader;
  readonly #network: ConfiguredNetwork;
  readonly #certificates: LbCertificates;
  readonly #catalog: CatalogCache;
  readonly #labeler: ServerLabeler;
  #clusterId?: string;
  readonly #lookup: LbLookup;
  readonly #robot: RobotTargetContext;
  readonly #targets: LbTargets;
  /** What the last successful sync asked of each balancer (by ID), for drift repair. */
  readonly #asked = new Map<number, DriftRecord>();
  /** Eligible Nodes at the last sync: sizes the drift list's pages. */
  #nodeCount = 0;
  /** The TLS Secrets (`namespace/name`) each Service's last sync served, by UID. */
  readonly #tlsRefs = new Map<string, string[]>();
  /** Balancers made outside Kubernetes that Services are attached to (`attach-to`). */
  readonly #coManaged: CoManagedBalancers;
  /** Who may name objects made outside the CCM (consent.ts). */
  readonly #consent: ExternalObjectConsent;
  /** Whether the cluster's Services are known (useCluster), to tell a live owner from a gone one. */
  #servicesKnown = false;
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
    this.#actions = ctx.actions;
    this.#defaults = defaults;
    this.#network = ctx.network;
    this.reader = new ServiceReader(defaults, () => ctx.network.id !== undefined);
    this.#consent = new ExternalObjectConsent(defaults.externalObjectsNamespaces);
    this.#certificates = new LbCertificates(ctx.client, ctx.actions, this.#consent);
    this.#catalog = new CatalogCache(ctx.client);
    this.#targets = new LbTargets(ctx.client, ctx.actions, this.#robot);
    this.#lookup = new LbLookup(ctx.client, () => this.#clusterId, this.#consent);
    this.#coManaged = new CoManagedBalancers(ctx, this.#labeler, this.#consent);
    this.#shared = new SharedBalancers(ctx, this.#labeler, this.#catalog);
    this.#deletion = {
      client: ctx.client,
      clusterId: () => this.#clusterId,
      shared: this.#shared,
      coManaged: this.#coManaged,
      certificates: this.#certificates,
      lookup: this.#lookup,
      asked: this.#asked,
    };
    this.inventory = new ClusterInventory({
      client: ctx.client,
      clusterId: () => this.#clusterId,
      // Without the cluster's Services (owners unknown) every owner is taken to be alive.
      services: () => this.#servicesKnown ? this.#lookup.services : undefined,
      labeler: this.#labeler,
      shared: this.#shared,
      coManaged: this.#coManaged,
      asked: this.#asked,
      nodeCount: () => this.#nodeCount,
      appliedIps: this.#robot.enabled ? this.#targets.appliedIps : undefined,
      health: registry && new TargetHealthGauge(registry),
      tls: defaults.tlsSecrets ? this.#certificates.tls : undefined,
    });
    if (defaults.firewall) {
      const firewall = new HcloudFirewall(ctx.client, defaults.firewall, () => this.#clusterId);
      this.firewall = {
        sync: (signal, options) => withSignal(signal, () => firewall.sync(options?.balancersUnchanged)),
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
      ? sharedName(service.metadata?.namespace ?? "default", spec.share, this.#clusterId ?? "")
      : defaultLoadBalancerName(service);
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
        ? await this.#shared.find(service, spec.share, this.#clusterId)
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
      // Said on every sync of such a Service, as the official CCM does, whether or not the sync fails
      // (not for a co-managed balancer, whose type is its maker's). A refused value comes with the
      // warnings HCCM gives before it reaches that value (see HccmStage): the type is resolved
      // after the node-selector, non-TCP ports are reported as the services are built.
      const { spec: parsed, invalid, service } = req;
      const stage = earliestStage(invalid) ?? HccmStage.Ingress;
      const unconfigured: ProviderWarning[] =
        parsed.typeAnnotated || this.#defaults.type || parsed.attachTo || stage < HccmStage.Create ? [] : [{
          reason: "LoadBalancerTypeUnconfigured",
          message: "Load Balancer Type unconfigured: this will be required in the future, set it with the " +
            `annotation "${LB_ANNOTATION_PREFIX}type" or cluster-wide with the environment variable ` +
            '"HCLOUD_LOAD_BALANCERS_TYPE"; using lb11',
        }];
      try {
        const result = await this.#ensure(req);
        return { ...result, warnings: [...unconfigured, ...result.warnings ?? []] };
      } catch (err) {
        const ports = invalid.size && stage >= HccmStage.Services ? unsupportedPorts(service) : [];
        // A refused value ends the sync before the Service's fields are looked at: say in the same
        // sync what else needs fixing (a typo'd annotation, source ranges), so one edit fixes all.
        const fields = invalid.size
          ? checkServiceFields(service, parsed, 1).warnings.filter((w) => w.reason !== "NothingToServe")
          : [];
        throw ProviderError.with(err, { warnings: [...unconfigured, ...ports, ...fields] });
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
    state: { lookedUp: boolean; found: boolean },
  ): Promise<LoadBalancerResult> {
    const spec = usableSpec(req);
    if (spec.share) return await this.#ensureShared(req);
    // It served on a shared balancer: it leaves that first (a port it takes along is free again).
    const left = await this.#leaveShared(req.service);
    const result = await this.#ensureUnshared(req, state);
    return left ? { ...result, annotations: { ...result.annotations, ...left } } : result;
  }

  async #ensureUnshared(
    req: ServiceRequest,
    state: { lookedUp: boolean; found: boolean },
  ): Promise<LoadBalancerResult> {
    const { service, spec, nodes, keep } = req;
    if (spec.attachTo) return await this.#ensureCoManaged(req);
    // Label-selector targets need the cluster identity; without it, per-server targets stay safe.
    const identity = spec.nodeSelector ? undefined : this.#clusterId;
    const selector = identity ? this.#labeler.selector(identity) : undefined;
    // Taken before any await, so this node set can never overwrite a newer one (see ServerLabeler);
    // applied once the input has been checked, so bad input changes nothing in the cloud.
    if (identity) this.#labeler.want(identity, nodes);
    const warnings: ProviderWarning[] = [];
    await checkCatalog(this.#catalog, spec, warnings);
    const { certificates, services, warnings: serviceWarnings } = await this.#ports(req);
    warnings.push(...certificates.warnings);
    const { ids, warnings: targetWarnings } = desiredServerIds(nodes, spec, this.#robot.enabled, keep);
    const robotTargets = await robotTargetIps(
      selectedNodes(nodes, spec, keep),
      spec.usePrivateIp,
      this.#robot,
    );
    warnings.push(...serviceWarnings, ...targetWarnings, ...robotTargets.warnings);
    const name = this.getLoadBalancerName(req.clusterName, service);
    let lb = await this.#lookup.findOwned(name, service, spec);
    state.lookedUp = true;
    state.found = lb !== undefined;
    await checkServiceLimit(this.#catalog, spec, lb, services.length);
    const fields = checkServiceFields(service, spec, services.length);
    warnings.push(...fields.warnings);
    if (!lb && fields.refuseCreate) {
      throw new ProviderError(new TerminalError(fields.refuseCreate), {
        warnings: warnings.filter((w) => w.reason !== "NothingToServe"),
      });
    }
    // Primary IPs a new balancer would take: the consent to use them is checked before any change.
    if (!lb) {
      await this.#consent.checkPrimaryIps(
        this.#client,
        service,
        [spec.publicNetIpv4, spec.publicNetIpv6].filter((id): id is number => id !== undefined),
      );
    }
    if (identity) await this.#labeler.apply();
    if (lb) warnings.push(...primaryIpWarnings(lb, spec));
    if (!lb) {
      lb = await createLoadBalancer(this.#client, this.#actions, {
        name,
        owner: ownerLabels({
          serviceUid: service.metadata!.uid!,
          clusterId: this.#clusterId,
          identity: identityLabels(service),
        }),
        spec,
        services,
        serverIds: ids,
        selector,
        networkId: this.#network.id,
      });
    }
    let changed = await this.#reconcileAttributes(lb, service, spec);
    if (changed) lb = await this.#lookup.get(lb.id);
    if (selector) warnTooManyTargets(ids.length, lb.load_balancer_type, warnings);
    changed = (await this.#reconcileServices(lb, services)) || changed;
    changed =
      (await (selector
        ? this.#targets.label(lb, selector, spec.usePrivateIp)
        : this.#targets.servers(lb, ids, spec, warnings, nodes))) ||
      changed;
    changed = (await this.#targets.ips(lb, robotTargets.ips, warnings)) || changed;
    if (changed) lb = await this.#lookup.get(lb.id);
    this.#nodeCount = nodes.length;
    this.#asked.set(lb.id, {
      serviceUid: service.metadata!.uid!,
      clusterId: this.#clusterId,
      spec,
      services,
      targets: selector ? { selector } : { serverIds: ids },
      networkId: this.#network.id,
    });
    // Certificates a renewed TLS Secret replaced are no longer on this balancer: delete them if unused.
    await this.#tlsAfterSync(service, certificates.secrets);
    return { ingress: ingressOf(lb, spec), warnings };
  }

  /**
   * After a sync put the certificates of the TLS Secrets `refs` in place: older certificates of those
   * Secrets go (a renewal), and so do the unused ones of Secrets the Service named at its last sync
   * and no longer does (it moved to another Secret): renewals and moves leave no key behind.
   */
  async #tlsAfterSync(service: Service, refs: string[]): Promise<void> {
    const uid = service.metadata!.uid!;
    const before = this.#tlsRefs.get(uid) ?? [];
    await this.#certificates.tls.cleanUp(this.#clusterId, refs);
    const dropped = before.filter((ref) => !refs.includes(ref));
    if (dropped.length) await this.#certificates.tls.sweep(this.#clusterId, dropped);
    if (refs.length) this.#tlsRefs.set(uid, refs);
    else this.#tlsRefs.delete(uid);
  }

  /** The Service's ports as balancer services, with the certificates they use. */
  async #ports({ service, spec, secrets }: ServiceRequest) {
    // As the official CCM: a managed certificate is made whenever one is asked for, used by https services.
    const certificates = LbCertificates.wanted(spec)
      ? await this.#certificates.resolve(service, spec, secrets, this.#clusterId)
      : { ids: [], byPort: new Map(), warnings: [], secrets: [] };
    return { certificates, ...desiredServices(service, spec, certificates.ids, certificates.byPort) };
  }

  /** A Service on a shared balancer (shared.ts): its ports, and the cluster's target. */
  async #ensureShared(req: ServiceRequest): Promise<LoadBalancerResult> {
    const { service, spec, nodes } = req;
    const warnings: ProviderWarning[] = [];
    await checkCatalog(this.#catalog, spec, warnings);
    const { certificates, services, warnings: serviceWarnings } = await this.#ports(req);
    const fields = checkServiceFields(service, spec, services.length);
    warnings.push(...certificates.warnings, ...serviceWarnings, ...fields.warnings);
    if (fields.refuseCreate) throw new ProviderError(new TerminalError(fields.refuseCreate), { warnings });
    const result = await this.#shared.ensure(service, spec, services, nodes, this.#clusterId);
    await this.#tlsAfterSync(service, certificates.secrets);
    return { ...result, warnings };
  }

  /** Takes a Service whose record says it served on a shared balancer off it; the record to clear. */
  async #leaveShared(service: Service): Promise<Record<string, null> | undefined> {
    if (service.metadata?.annotations?.[SHARED_STATE] === undefined) return undefined;
    await this.#shared.release(service, this.#clusterId);
    return { [SHARED_STATE]: null };
  }

  /** A Service attached to a balancer made outside Kubernetes: only its ports and the target are ours. */
  async #ensureCoManaged(req: ServiceRequest): Promise<LoadBalancerResult> {
    const { service, spec, nodes } = req;
    const { certificates, services, warnings } = await this.#ports(req);
    const fields = checkServiceFields(service, spec, services.length);
    const result = await this.#coManaged.ensure(service, spec, services, nodes, this.#clusterId);
    await this.#tlsAfterSync(service, certificates.secrets);
    return {
      ...result,
      warnings: [...certificates.warnings, ...warnings, ...fields.warnings, ...result.warnings ?? []],
    };
  }

  /**
   * The cluster served (from the provider's `initialize`): its identity labels what is created (and
   * without it nothing is swept), its Services tell a live owner from a gone one.
   */
  useCluster(cluster: ClusterView): void {
    this.#clusterId = cluster.clusterId;
    this.#certificates.clusterId = cluster.clusterId;
    const services = cluster.services?.bind(cluster);
    if (!services) return; // owners unknown: every one is taken to be alive
    this.#servicesKnown = true;
    const all = () => [...services()];
    const exists = (uid: string) => services().some((svc) => svc.metadata?.uid === uid);
    this.#lookup.serviceExists = exists;
    this.#certificates.serviceExists = exists;
    this.#certificates.serviceName = (uid) => {
      const found = services().find((svc) => svc.metadata?.uid === uid)?.metadata;
      return found && `${found.namespace ?? "default"}/${found.name}`;
    };
    this.#coManaged.services = all;
    this.#lookup.services = all;
  }

  /** Labels the eligible servers once for every label-selector load balancer. */
  async syncNodes(_cluster: string, nodes: Node[], signal?: AbortSignal): Promise<void> {
    return await withSignal(signal, async () => {
      if (this.#clusterId) await this.#labeler.sync(this.#clusterId, nodes);
    });
  }

  async updateLoadBalancer(
    sync: LoadBalancerSync,
    signal?: AbortSignal,
  ): Promise<{ warnings: ProviderWarning[]; updated?: boolean }> {
    const req = this.reader.request(sync);
    const { clusterName: cluster, service, nodes, keep } = req;
    return await withSignal(signal, async () => {
      const spec = usableSpec(req);
      // Co-managed and shared balancers target this cluster's label selector, which follows the labels.
      if (spec.attachTo || spec.share) return { warnings: [], updated: false };
      // Label-selector targets follow the server labels that syncNodes maintains: nothing to do here
      // but say when the type cannot hold them all.
      if (!spec.nodeSelector && this.#clusterId) {
        const warnings: ProviderWarning[] = [];
        const type = (await this.#catalog.get()).loadBalancerTypes.get(spec.type ?? "lb11");
        warnTooManyTargets(desiredServerIds(nodes, spec, this.#robot.enabled).ids.length, type, warnings);
        const name = this.getLoadBalancerName(cluster, service);
        const updated = await this.#targets.robotIfChanged(
          name,
          spec,
          nodes,
          warnings,
          () => this.#lookup.findOwned(name, service, spec).catch(ignoreRefused),
        );
        return { warnings, updated };
      }
      // A same-named balancer we may not take was reported by the last ensure: leave it alone here.
      const lb = await this.#lookup.findOwned(this.getLoadBalancerName(cluster, service), service, spec)
        .catch(
          ignoreRefused,
        );
      const { ids, warnings } = desiredServerIds(nodes, spec, this.#robot.enabled, keep);
      const robotTargets = await robotTargetIps(
        selectedNodes(nodes, spec, keep),
        spec.usePrivateIp,
        this.#robot,
      );
      warnings.push(...robotTargets.warnings);
      if (!lb) return { warnings, updated: false };
      let changed = await this.#targets.servers(lb, ids, spec, warnings, nodes);
      changed = (await this.#targets.ips(lb, robotTargets.ips, warnings)) || changed;
      this.#nodeCount = nodes.length;
      const asked = this.#asked.get(lb.id);
      if (asked) asked.targets = { serverIds: ids };
      return { warnings, updated: changed };
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
    this.#tlsRefs.delete(service.metadata?.uid ?? "");
    return await withSignal(
      signal,
      () => deleteServiceBalancer(this.#deletion, service, this.reader.read(service).spec),
    );
  }

  /** Attributes by plan (plan.ts) and execution (actions.ts), the network step between. */
  async #reconcileAttributes(lb: LB, service: Service, spec: LoadBalancerSpec): Promise<boolean> {
    const owner = {
      serviceUid: service.metadata!.uid!,
      clusterId: this.#clusterId,
      identity: identityLabels(service),
    };
    const run = async (actions: LbAction[]) => {
      for (const action of actions) await executeLbAction(this.#client, this.#actions, lb.id, action);
      return actions.length > 0;
    };
    let changed = await run(planShape(lb, spec, owner));
    changed = (await reconcileNetwork(this.#client, this.#actions, lb, spec, this.#network.id)) || changed;
    return (await run(planExposure(lb, spec))) || changed;
  }

  /** Services (ports) by plan and execution. */
  async #reconcileServices(lb: LB, desired: DesiredService[]): Promise<boolean> {
    const actions = planServices(lb, desired);
    for (const action of actions) await executeLbAction(this.#client, this.#actions, lb.id, action);
    return actions.length > 0;
  }
}

/** A same-named balancer we may not take was reported by the last ensure: treated as none here. */
function ignoreRefused(err: unknown): undefined {
  if (rootCause(err) instanceof TerminalError) return undefined;
  throw err;
}
