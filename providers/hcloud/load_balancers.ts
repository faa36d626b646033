/**
 * Hetzner load balancers for Services, compatible with the official CCM: found by the label
 * `hcloud-ccm/service-uid`, else adopted by name; created with services, targets and network in
 * one request; afterwards only differences are applied, each action awaited (a busy load balancer
 * answers `locked`).
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerResult, LoadBalancers, LoadBalancerStatus, ProviderWarning } from "../provider.ts";
import { attachWarnings, CloudApiError, TerminalError } from "../errors.ts";
import type { HcloudClient, Schemas } from "./client.ts";
import type { ActionWaiter } from "./action_waiter.ts";
import type { LoadBalancerDefaults } from "./config.ts";
import { defaultLoadBalancerName, type LoadBalancerSpec, parseLoadBalancerSpec } from "./lb_annotations.ts";
import { desiredServerIds, type DesiredService, desiredServices, ingressOf } from "./lb_desired.ts";
import { LbCertificates } from "./lb_certificates.ts";
import { checkServiceFields } from "./lb_service_fields.ts";
import { LbLookup } from "./lb_lookup.ts";
import { existingOwners, sweepOrphans } from "./lb_inventory.ts";
import { CatalogCache } from "./catalog_cache.ts";
import { parseLabelSelector } from "../../lib/label_selector.ts";
import { primaryIpsBody, primaryIpWarnings } from "./lb_primary_ips.ts";
import { reconcileIpTargets, type RobotTargetContext, robotTargetIps } from "./lb_robot_targets.ts";
import { parseProviderId } from "./provider_id.ts";
import { ServerLabeler } from "./server_labeler.ts";
import type { ConfiguredNetwork, HcloudContext } from "./context.ts";
import { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "./lb_labels.ts";
import {
  type LbAction,
  planExposure,
  planLabelTarget,
  planServerTargets,
  planServices,
  planShape,
} from "./lb_plan.ts";
import { executeLbAction } from "./lb_actions.ts";
import { driftOf, driftPageSize, type DriftRecord, listClusterLoadBalancers, ownerOf } from "./lb_drift.ts";
import { CoManagedBalancers } from "./lb_co_managed.ts";
import type { DriftReport } from "../provider.ts";

type LB = Schemas["load_balancer"];

export { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "./lb_labels.ts";

/** See the module doc. */
export class HcloudLoadBalancers implements LoadBalancers {
  readonly #client: HcloudClient;
  readonly #actions: ActionWaiter;
  readonly #defaults: LoadBalancerDefaults;
  readonly #network: ConfiguredNetwork;
  readonly #certificates: LbCertificates;
  readonly #catalog: CatalogCache;
  readonly #labeler: ServerLabeler;
  #clusterId?: string;
  readonly #lookup: LbLookup;
  readonly #robot: RobotTargetContext;
  /** IP targets last applied per balancer name: a node-set change that leaves them alone costs nothing. */
  readonly #appliedIps = new Map<string, string>();
  /** What the last successful sync asked of each balancer (by ID), for drift repair. */
  readonly #asked = new Map<number, DriftRecord>();
  /** Eligible Nodes at the last sync: sizes the drift list's pages. */
  #nodeCount = 0;
  /** Balancers made outside Kubernetes that Services are attached to (`attach-to`). */
  readonly #coManaged: CoManagedBalancers;

  constructor(ctx: HcloudContext, defaults: LoadBalancerDefaults) {
    this.#robot = { enabled: ctx.robotEnabled, servers: ctx.robot };
    this.#labeler = new ServerLabeler(ctx.client, ctx.cache);
    this.#client = ctx.client;
    this.#actions = ctx.actions;
    this.#defaults = defaults;
    this.#network = ctx.network;
    this.#certificates = new LbCertificates(ctx.client, ctx.actions);
    this.#catalog = new CatalogCache(ctx.client);
    this.#lookup = new LbLookup(ctx.client, () => this.#clusterId);
    this.#coManaged = new CoManagedBalancers(ctx, this.#labeler);
  }

  getLoadBalancerName(_cluster: string, service: Service): string {
    return parseLoadBalancerSpec(service, this.#defaults).spec.name || defaultLoadBalancerName(service);
  }

  async getLoadBalancer(_cluster: string, service: Service): Promise<LoadBalancerStatus | undefined> {
    const lb = await this.#lookup.findByUid(service);
    if (!lb) return undefined;
    const { spec } = parseLoadBalancerSpec(service, this.#defaults);
    return { ingress: ingressOf(lb, spec) };
  }

  async ensureLoadBalancer(cluster: string, service: Service, nodes: Node[]): Promise<LoadBalancerResult> {
    // Said on every sync of such a Service, as the official CCM does, whether or not the sync fails
    // (not for a co-managed balancer, whose type is its maker's).
    const { spec: parsed } = parseLoadBalancerSpec(service, this.#defaults);
    const unconfigured: ProviderWarning[] = parsed.typeAnnotated || this.#defaults.type || parsed.attachTo
      ? []
      : [{
        reason: "LoadBalancerTypeUnconfigured",
        message: "Load Balancer Type unconfigured: this will be required in the future, set it with the " +
          'annotation "load-balancer.hetzner.cloud/type" or cluster-wide with the environment variable ' +
          '"HCLOUD_LOAD_BALANCERS_TYPE"; using lb11',
      }];
    try {
      const result = await this.#ensure(cluster, service, nodes);
      return { ...result, warnings: [...unconfigured, ...result.warnings ?? []] };
    } catch (err) {
      attachWarnings(err, unconfigured);
      throw err;
    }
  }

  async #ensure(cluster: string, service: Service, nodes: Node[]): Promise<LoadBalancerResult> {
    const spec = this.#spec(service);
    if (spec.attachTo) return await this.#ensureCoManaged(service, spec, nodes);
    // Label-selector targets need the cluster identity; without it, per-server targets stay safe.
    const identity = spec.nodeSelector ? undefined : this.#clusterId;
    const selector = identity ? this.#labeler.selector(identity) : undefined;
    // Taken before any await, so this node set can never overwrite a newer one (see ServerLabeler);
    // applied once the input has been checked, so bad input changes nothing in the cloud.
    if (identity) this.#labeler.want(identity, nodes);
    const warnings: ProviderWarning[] = [];
    await this.#checkCatalog(spec, warnings);
    const certificates = spec.protocol === "https"
      ? await this.#certificates.resolve(service, spec)
      : { ids: [], warnings: [] };
    warnings.push(...certificates.warnings);
    const { services, warnings: serviceWarnings } = desiredServices(service, spec, certificates.ids);
    const { ids, warnings: targetWarnings } = desiredServerIds(nodes, spec, this.#robot.enabled);
    const robotTargets = await robotTargetIps(selectedNodes(nodes, spec), spec.usePrivateIp, this.#robot);
    warnings.push(...serviceWarnings, ...targetWarnings, ...robotTargets.warnings);
    let lb = await this.#lookup.findOwned(this.getLoadBalancerName(cluster, service), service, spec);
    await this.#checkServiceLimit(spec, lb, services.length);
    const fields = checkServiceFields(service, spec, services.length);
    warnings.push(...fields.warnings);
    if (!lb && fields.refuseCreate) {
      const err = new TerminalError(fields.refuseCreate);
      attachWarnings(err, warnings.filter((w) => w.reason !== "NothingToServe"));
      throw err;
    }
    if (identity) await this.#labeler.apply();
    if (lb) warnings.push(...primaryIpWarnings(lb, spec));
    if (!lb) lb = await this.#create(cluster, service, spec, services, ids, selector);
    let changed = await this.#reconcileAttributes(lb, service, spec);
    if (changed) lb = await this.#lookup.get(lb.id);
    if (selector) warnTooManyTargets(ids.length, lb.load_balancer_type, warnings);
    changed = (await this.#reconcileServices(lb, services)) || changed;
    changed =
      (await (selector
        ? this.#reconcileLabelTarget(lb, selector, spec)
        : this.#reconcileTargets(lb, ids, spec, warnings, nodes))) ||
      changed;
    changed = (await this.#reconcileIpTargets(lb, robotTargets.ips, warnings)) || changed;
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
    return { ingress: ingressOf(lb, spec), warnings };
  }

  /** A Service attached to a balancer made outside Kubernetes: only its ports and the target are ours. */
  async #ensureCoManaged(
    service: Service,
    spec: LoadBalancerSpec,
    nodes: Node[],
  ): Promise<LoadBalancerResult> {
    const certificates = spec.protocol === "https"
      ? await this.#certificates.resolve(service, spec)
      : { ids: [], warnings: [] };
    const { services, warnings } = desiredServices(service, spec, certificates.ids);
    const fields = checkServiceFields(service, spec, services.length);
    const result = await this.#coManaged.ensure(service, spec, services, nodes, this.#clusterId);
    return {
      ...result,
      warnings: [...certificates.warnings, ...warnings, ...fields.warnings, ...result.warnings ?? []],
    };
  }

  setClusterId(clusterId: string): void {
    this.#clusterId = clusterId;
  }

  sweepOrphans(clusterId: string, liveServiceUids: Set<string>): Promise<number> {
    return sweepOrphans(this.#client, clusterId, liveServiceUids);
  }

  /** Labels the eligible servers once for every label-selector load balancer. */
  async syncNodes(_cluster: string, nodes: Node[]): Promise<void> {
    if (this.#clusterId) await this.#labeler.sync(this.#clusterId, nodes);
  }

  async updateLoadBalancer(
    cluster: string,
    service: Service,
    nodes: Node[],
  ): Promise<{ warnings: ProviderWarning[]; updated?: boolean }> {
    const spec = this.#spec(service);
    // A co-managed balancer's target is this cluster's label selector, which follows the labels.
    if (spec.attachTo) return { warnings: [], updated: false };
    // Label-selector targets follow the server labels that syncNodes maintains: nothing to do here
    // but say when the type cannot hold them all.
    if (!spec.nodeSelector && this.#clusterId) {
      const warnings: ProviderWarning[] = [];
      const type = (await this.#catalog.get()).loadBalancerTypes.get(spec.type ?? "lb11");
      warnTooManyTargets(desiredServerIds(nodes, spec, this.#robot.enabled).ids.length, type, warnings);
      const updated = await this.#updateRobotTargets(cluster, service, spec, nodes, warnings);
      return { warnings, updated };
    }
    // A same-named balancer we may not take was reported by the last ensure: leave it alone here.
    const lb = await this.#lookup.findOwned(this.getLoadBalancerName(cluster, service), service, spec).catch(
      (err) => {
        if (err instanceof TerminalError) return undefined;
        throw err;
      },
    );
    const { ids, warnings } = desiredServerIds(nodes, spec, this.#robot.enabled);
    const robotTargets = await robotTargetIps(selectedNodes(nodes, spec), spec.usePrivateIp, this.#robot);
    warnings.push(...robotTargets.warnings);
    if (!lb) return { warnings, updated: false };
    let changed = await this.#reconcileTargets(lb, ids, spec, warnings, nodes);
    changed = (await this.#reconcileIpTargets(lb, robotTargets.ips, warnings)) || changed;
    this.#nodeCount = nodes.length;
    const asked = this.#asked.get(lb.id);
    if (asked) asked.targets = { serverIds: ids };
    return { warnings, updated: changed };
  }

  targetNodeNames(service: Service, nodes: Node[]): Set<string> | undefined {
    const { spec } = parseLoadBalancerSpec(service, this.#defaults);
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

  async existingLoadBalancerOwners(expected: number): Promise<Set<string> | undefined> {
    if (!this.#clusterId) return undefined;
    // Co-managed balancers carry no label of ours: their Services count as having one.
    const attached = [...this.#coManaged.attached.keys()];
    const owners = await existingOwners(
      this.#client,
      this.#clusterId,
      expected - attached.length,
      (lb) => this.#labeler.checkResolved(lb),
    );
    if (owners) { for (const uid of attached) owners.add(uid); }
    return owners;
  }

  async checkDrift(): Promise<DriftReport | undefined> {
    if (!this.#clusterId) return undefined;
    const listed = await listClusterLoadBalancers(
      this.#client,
      this.#clusterId,
      driftPageSize(this.#nodeCount),
    );
    const owners = new Set<string>();
    const drifted = new Map<string, string[]>();
    for (const lb of listed) {
      const uid = ownerOf(lb);
      if (uid) owners.add(uid);
      const asked = this.#asked.get(lb.id);
      if (!asked || asked.serviceUid !== uid) continue;
      const ipTargets = this.#robot.enabled ? this.#appliedIps.get(lb.name) : undefined;
      const differences = driftOf(lb, { ...asked, ipTargets });
      if (differences.length) drifted.set(asked.serviceUid, differences);
    }
    for (const uid of this.#coManaged.attached.keys()) owners.add(uid);
    return { owners, drifted };
  }

  async ensureLoadBalancerDeleted(
    _cluster: string,
    service: Service,
  ): Promise<void | { annotations: Record<string, null> }> {
    const released = await this.#coManaged.release(service, this.#clusterId);
    if (released || parseLoadBalancerSpec(service, this.#defaults).spec.attachTo) {
      await this.#certificates.deleteFor(service);
      return released;
    }
    const lb = await this.#lookup.findByUid(service);
    if (lb) this.#asked.delete(lb.id);
    // Delete protection wins: the load balancer (and its IPs and certificates) stay; the Service can go.
    if (lb?.protection?.delete) return;
    if (lb) {
      try {
        await this.#client.call(
          "delete load balancer",
          this.#client.api.DELETE("/load_balancers/{id}", { params: { path: { id: lb.id } } }),
        );
      } catch (err) {
        if (!(err instanceof CloudApiError && err.status === 404)) throw err;
      }
    }
    // Managed certificates created for the Service go with its balancer (unless used elsewhere).
    const managed = parseLoadBalancerSpec(service, this.#defaults).spec.certificateType === "managed";
    if (managed || lb?.services.some((s) => s.protocol === "https")) {
      await this.#certificates.deleteFor(service);
    }
  }

  #spec(service: Service): LoadBalancerSpec {
    const { spec, errors } = parseLoadBalancerSpec(service, this.#defaults);
    if (spec.usePrivateIp && this.#network.id === undefined) {
      errors.push(
        "annotation load-balancer.hetzner.cloud/use-private-ip needs a network (HCLOUD_NETWORK is not set)",
      );
    }
    if (errors.length) throw new TerminalError(errors.join("; "));
    return spec;
  }

  /** More ports than the balancer type holds is an input error naming the type and its limit. */
  async #checkServiceLimit(spec: LoadBalancerSpec, lb: LB | undefined, ports: number): Promise<void> {
    const name = spec.type ?? lb?.load_balancer_type?.name ?? "lb11";
    const max = (await this.#catalog.get()).loadBalancerTypes.get(name)?.max_services;
    if (max !== undefined && ports > max) {
      throw new TerminalError(
        `${ports} ports to serve, but load balancer type ${name} allows ${max} services: serve fewer ports or ` +
          "choose a larger type with the annotation load-balancer.hetzner.cloud/type",
      );
    }
  }

  /** Unknown locations, zones and types are input errors; deprecated types a warning. */
  async #checkCatalog(spec: LoadBalancerSpec, warnings: ProviderWarning[]): Promise<void> {
    const catalog = await this.#catalog.get();
    const errors: string[] = [];
    const known = (
      what: string,
      value: string | undefined,
      set: { has(v: string): boolean },
      name: string,
      env: string,
    ) => {
      if (value !== undefined && !set.has(value)) {
        errors.push(
          `annotation load-balancer.hetzner.cloud/${name}: "${value}" is not a known ${what} (or set by ${env})`,
        );
      }
    };
    known("location", spec.location, catalog.locations, "location", "HCLOUD_LOAD_BALANCERS_LOCATION");
    known(
      "network zone",
      spec.networkZone,
      catalog.zones,
      "network-zone",
      "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE",
    );
    known("load balancer type", spec.type, catalog.loadBalancerTypes, "type", "HCLOUD_LOAD_BALANCERS_TYPE");
    if (errors.length) throw new TerminalError(errors.join("; "));
    if (spec.type && catalog.loadBalancerTypes.get(spec.type)?.deprecated) {
      warnings.push({
        reason: "LoadBalancerTypeDeprecated",
        message: `load balancer type ${spec.type} is deprecated`,
      });
    }
  }

  setServiceLookup(exists: (uid: string) => boolean, all?: () => Service[]): void {
    this.#lookup.serviceExists = exists;
    this.#certificates.serviceExists = exists;
    if (all) this.#coManaged.services = all;
  }

  /** Sends one action request and waits until the action finished (the LB is locked until then). */
  async #act(
    what: string,
    pending: Promise<{ data?: unknown; error?: unknown; response: Response }>,
  ): Promise<void> {
    const data = await this.#client.call(what, pending) as { action?: Schemas["action"] | null };
    if (data.action) await this.#actions.wait(data.action);
  }

  async #create(
    cluster: string,
    service: Service,
    spec: LoadBalancerSpec,
    services: DesiredService[],
    ids: number[],
    selector: string | undefined,
  ): Promise<LB> {
    if (!spec.location && !spec.networkZone) {
      throw new TerminalError(
        "no location: set the annotation load-balancer.hetzner.cloud/location or network-zone, or HCLOUD_LOAD_BALANCERS_LOCATION",
      );
    }
    const networkId = this.#network.id;
    // A fixed private IP or subnet is set by a separate attach after creation.
    const attachOnCreate = networkId !== undefined && !spec.privateIpv4 && !spec.privateSubnetIpRange;
    const body = {
      name: this.getLoadBalancerName(cluster, service),
      load_balancer_type: spec.type ?? "lb11",
      labels: {
        [SERVICE_UID_LABEL]: service.metadata!.uid!,
        ...(this.#clusterId ? { [CLUSTER_ID_LABEL]: this.#clusterId } : {}),
      } as Record<string, string>,
      ...(spec.location ? { location: spec.location } : { network_zone: spec.networkZone }),
      ...(spec.algorithm ? { algorithm: { type: spec.algorithm } } : {}),
      ...(attachOnCreate ? { network: networkId } : {}),
      ...(spec.disablePublicNetwork !== undefined ? { public_interface: !spec.disablePublicNetwork } : {}),
      ...primaryIpsBody(spec),
      services: services as Schemas["load_balancer_service"][],
      targets: !attachOnCreate && spec.usePrivateIp ? [] : selector
        ? [{
          type: "label_selector" as const,
          label_selector: { selector },
          use_private_ip: spec.usePrivateIp,
        }]
        : ids.map((id) => ({ type: "server" as const, server: { id }, use_private_ip: spec.usePrivateIp })),
    };
    const data = await this.#client.call(
      "create load balancer",
      this.#client.api.POST("/load_balancers", { body }),
    );
    await this.#actions.wait(data.action);
    return data.load_balancer;
  }

  /** Labels, name, rDNS, algorithm, type, network, public interface, protection: only what differs. */
  /** Attributes by plan (lb_plan.ts) and execution (lb_actions.ts), the network step between. */
  async #reconcileAttributes(lb: LB, service: Service, spec: LoadBalancerSpec): Promise<boolean> {
    const owner = { serviceUid: service.metadata!.uid!, clusterId: this.#clusterId };
    const run = async (actions: LbAction[]) => {
      for (const action of actions) await executeLbAction(this.#client, this.#actions, lb.id, action);
      return actions.length > 0;
    };
    let changed = await run(planShape(lb, spec, owner));
    changed = (await this.#reconcileNetwork(lb, spec)) || changed;
    return (await run(planExposure(lb, spec))) || changed;
  }

  async #reconcileNetwork(lb: LB, spec: LoadBalancerSpec): Promise<boolean> {
    const networkId = this.#network.id;
    if (networkId === undefined) return false;
    const api = this.#client.api;
    const path = { params: { path: { id: lb.id } } };
    const current = (lb.private_net ?? []).find((p) => p.network === networkId);
    if (current && spec.privateIpv4 && current.ip !== spec.privateIpv4) {
      await this.#act(
        "detach from network",
        api.POST("/load_balancers/{id}/actions/detach_from_network", {
          ...path,
          body: { network: networkId },
        }),
      );
    } else if (current) return false;
    await this.#act(
      "attach to network",
      api.POST("/load_balancers/{id}/actions/attach_to_network", {
        ...path,
        body: {
          network: networkId,
          ...(spec.privateIpv4 ? { ip: spec.privateIpv4 } : {}),
          ...(spec.privateSubnetIpRange ? { ip_range: spec.privateSubnetIpRange } : {}),
        },
      }),
    );
    return true;
  }

  /** Services (ports) by plan and execution. */
  async #reconcileServices(lb: LB, desired: DesiredService[]): Promise<boolean> {
    const actions = planServices(lb, desired);
    for (const action of actions) await executeLbAction(this.#client, this.#actions, lb.id, action);
    return actions.length > 0;
  }

  /**
   * One label-selector target: added first, then every other target (server targets of the
   * official CCM, say) removed, so traffic never loses its backends while migrating.
   */
  async #reconcileLabelTarget(lb: LB, selector: string, spec: LoadBalancerSpec): Promise<boolean> {
    const actions = planLabelTarget(lb, selector, spec.usePrivateIp);
    for (const action of actions) await executeLbAction(this.#client, this.#actions, lb.id, action);
    return actions.length > 0;
  }

  /** Label-selector balancers: Robot Nodes' IP targets follow the node set (no call when unchanged). */
  async #updateRobotTargets(
    cluster: string,
    service: Service,
    spec: LoadBalancerSpec,
    nodes: Node[],
    warnings: ProviderWarning[],
  ): Promise<boolean> {
    if (!this.#robot.enabled) return false;
    const robotTargets = await robotTargetIps(selectedNodes(nodes, spec), spec.usePrivateIp, this.#robot);
    warnings.push(...robotTargets.warnings);
    const name = this.getLoadBalancerName(cluster, service);
    if (this.#appliedIps.get(name) === [...robotTargets.ips.keys()].sort().join(",")) return false;
    const lb = await this.#lookup.findOwned(name, service, spec).catch(
      (err) => {
        if (err instanceof TerminalError) return undefined;
        throw err;
      },
    );
    if (!lb) return false;
    return await this.#reconcileIpTargets(lb, robotTargets.ips, warnings);
  }

  /** IP targets: Robot Nodes' added, others removed (see lb_robot_targets.ts). */
  #reconcileIpTargets(lb: LB, wanted: Map<string, string>, warnings: ProviderWarning[]): Promise<boolean> {
    const path = { params: { path: { id: lb.id } } };
    return reconcileIpTargets(lb, wanted, warnings, {
      remove: (ip) =>
        this.#act(
          "remove target",
          this.#client.api.POST("/load_balancers/{id}/actions/remove_target", {
            ...path,
            body: { type: "ip", ip: { ip } },
          }),
        ),
      add: (ip) =>
        this.#act(
          "add target",
          this.#client.api.POST("/load_balancers/{id}/actions/add_target", {
            ...path,
            body: { type: "ip", ip: { ip }, use_private_ip: false },
          }),
        ),
      applied: (ips) => this.#appliedIps.set(lb.name, ips),
    });
  }

  /** Server targets: removes foreign and stale ones (or ones with the wrong private-IP flag), adds missing ones. */
  async #reconcileTargets(
    lb: LB,
    ids: number[],
    spec: LoadBalancerSpec,
    warnings: ProviderWarning[],
    nodes: Node[],
  ): Promise<boolean> {
    const nodeOf = (id: number) =>
      nodes.find((n) => {
        const p = parseProviderId(n.spec?.providerID);
        return p.kind === "cloud" && p.id === id;
      })?.metadata?.name;
    const max = lb.load_balancer_type?.max_targets ?? Infinity;
    // What stays counts against the type's limit; each add is checked against it as it goes.
    let count = (lb.targets ?? []).filter((t) => t.type === "server").length;
    let changed = false;
    for (const action of planServerTargets(lb, ids, spec.usePrivateIp)) {
      if (action.kind === "remove_target") {
        await executeLbAction(this.#client, this.#actions, lb.id, action);
        if (action.target.type === "server") count--;
        changed = true;
        continue;
      }
      const id = action.kind === "add_target" && action.target.type === "server"
        ? action.target.server.id
        : -1;
      if (count >= max) {
        warnings.push({
          reason: "MaxTargetsReached",
          message: `load balancer ${lb.name} (type ${lb.load_balancer_type?.name}) allows ${max} targets; ` +
            `server ${id} not added`,
          node: nodeOf(id),
        });
        continue;
      }
      try {
        await executeLbAction(this.#client, this.#actions, lb.id, action);
        count++;
        changed = true;
      } catch (err) {
        if (!(err instanceof CloudApiError && err.code === "resource_limit_exceeded")) throw err;
        warnings.push({
          reason: "MaxTargetsReached",
          message: `load balancer ${lb.name}: server ${id} not added: ${err.message}`,
          node: nodeOf(id),
        });
      }
    }
    return changed;
  }
}

/** A label selector matching more servers than the type allows: the API ignores the rest, say so. */
function warnTooManyTargets(
  eligible: number,
  type: { name?: string; max_targets?: number } | undefined,
  warnings: ProviderWarning[],
): void {
  const max = type?.max_targets;
  if (max === undefined || eligible <= max) return;
  warnings.push({
    reason: "MaxTargetsReached",
    message: `${eligible} eligible Nodes, but load balancer type ${type?.name} allows ${max} targets: ` +
      `only ${max} receive traffic; choose a larger type (annotation load-balancer.hetzner.cloud/type)`,
  });
}

/** The Nodes the Service's `node-selector` admits (all without one). */
function selectedNodes(nodes: Node[], spec: LoadBalancerSpec): Node[] {
  if (!spec.nodeSelector) return nodes;
  const selector = parseLabelSelector(spec.nodeSelector);
  return nodes.filter((n) => selector.matches(n.metadata?.labels ?? {}));
}
