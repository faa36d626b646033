/**
 * A Service's own balancer (neither shared nor co-managed), as the official CCM keeps it: found by
 * the label `hcloud-ccm/service-uid`, else adopted by name; created with services, targets and
 * network in one request; afterwards only differences are applied, each action awaited (a busy
 * balancer answers `locked`). Every input is checked before the first write, so bad input changes
 * nothing in the cloud.
 *
 * @module
 */
import type { LoadBalancerResult, ProviderWarning } from "../../../provider.ts";
import { ProviderError, rootCause, TerminalError } from "../../../errors.ts";
import type { ActionWaiter, HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import type { ServiceRequest } from "../core/request.ts";
import { desiredServerIds, type DesiredService, ingressOf } from "../core/desired.ts";
import { checkServiceFields } from "../core/service_fields.ts";
import type { LbLookup } from "./lookup.ts";
import type { DriftRecord } from "../inventory/mod.ts";
import type { CatalogCache } from "../core/catalog_cache.ts";
import { primaryIpWarnings } from "../core/primary_ips.ts";
import { type LbTargets, type RobotTargetContext, robotTargetIps, selectedNodes } from "../targets/mod.ts";
import { warnTooManyTargets } from "../targets/mod.ts";
import { checkCatalog, checkServiceLimit } from "../core/catalog_checks.ts";
import { createLoadBalancer, reconcileNetwork } from "../core/create.ts";
import type { ServerLabeler } from "../../servers/mod.ts";
import type { ConfiguredNetwork } from "../../context.ts";
import { type LbAction, ownerLabels, planExposure, planServices, planShape } from "../core/plan.ts";
import { executeLbAction } from "../core/actions.ts";
import type { ExternalObjectConsent } from "../core/consent.ts";
import { identityLabels } from "../core/labels.ts";
import type { ServicePorts } from "../certificates/mod.ts";
import type { ClusterFacts } from "../core/cluster_facts.ts";

type LB = Schemas["load_balancer"];

/** What a Service's own balancer works with: the room's parts, handed once at construction. */
export interface OwnBalancerParts {
  client: HcloudClient;
  actions: ActionWaiter;
  network: ConfiguredNetwork;
  catalog: CatalogCache;
  labeler: ServerLabeler;
  lookup: LbLookup;
  consent: ExternalObjectConsent;
  targets: LbTargets;
  robot: RobotTargetContext;
  ports: ServicePorts;
  /** The cluster served (label-selector targets and owner labels need its identity). */
  facts: ClusterFacts;
  /** What the last successful sync asked of each balancer (by ID), for drift repair. */
  asked: Map<number, DriftRecord>;
}

/** Whether the sync found (or made) a balancer: a failure without one clears the Service's ingress. */
export interface EnsureState {
  lookedUp: boolean;
  found: boolean;
}

/** See the module doc. */
export class OwnBalancers {
  readonly #p: OwnBalancerParts;

  constructor(parts: OwnBalancerParts) {
    this.#p = parts;
  }

  /** Creates or updates the Service's balancer (`name`: its name in the cloud). */
  async ensure(req: ServiceRequest, name: string, state: EnsureState): Promise<LoadBalancerResult> {
    const p = this.#p;
    const { service, spec, nodes, keep } = req;
    const clusterId = p.facts.clusterId();
    // Label-selector targets need the cluster identity; without it, per-server targets stay safe.
    const identity = spec.nodeSelector ? undefined : clusterId;
    const selector = identity ? p.labeler.selector(identity) : undefined;
    // Taken before any await, so this node set can never overwrite a newer one (see ServerLabeler);
    // applied once the input has been checked, so bad input changes nothing in the cloud.
    if (identity) p.labeler.want(identity, nodes);
    const warnings: ProviderWarning[] = [];
    await checkCatalog(p.catalog, spec, warnings);
    const { certificates, services, warnings: serviceWarnings } = await p.ports.of(req);
    warnings.push(...certificates.warnings);
    const { ids, warnings: targetWarnings } = desiredServerIds(nodes, spec, p.robot.enabled, keep);
    const robotTargets = await robotTargetIps(selectedNodes(nodes, spec, keep), spec.usePrivateIp, p.robot);
    warnings.push(...serviceWarnings, ...targetWarnings, ...robotTargets.warnings);
    let lb = await p.lookup.findOwned(name, service, spec);
    state.lookedUp = true;
    state.found = lb !== undefined;
    await checkServiceLimit(p.catalog, spec, lb, services.length);
    const fields = checkServiceFields(service, spec, services.length);
    warnings.push(...fields.warnings);
    if (!lb && fields.refuseCreate) {
      throw new ProviderError(new TerminalError(fields.refuseCreate), {
        warnings: warnings.filter((w) => w.reason !== "NothingToServe"),
      });
    }
    // Primary IPs a new balancer would take: the consent to use them is checked before any change.
    if (!lb) {
      await p.consent.checkPrimaryIps(
        p.client,
        service,
        [spec.publicNetIpv4, spec.publicNetIpv6].filter((id): id is number => id !== undefined),
      );
    }
    if (identity) await p.labeler.apply();
    const owner = { serviceUid: service.metadata!.uid!, clusterId, identity: identityLabels(service) };
    if (lb) warnings.push(...primaryIpWarnings(lb, spec));
    else {
      lb = await createLoadBalancer(p.client, p.actions, {
        name,
        owner: ownerLabels(owner),
        spec,
        services,
        serverIds: ids,
        selector,
        networkId: p.network.id,
      });
    }
    let changed = await this.#reconcileAttributes(lb, spec, owner);
    if (changed) lb = await p.lookup.get(lb.id);
    if (selector) warnTooManyTargets(ids.length, lb.load_balancer_type, warnings);
    changed = (await this.#reconcileServices(lb, services)) || changed;
    changed =
      (await (selector
        ? p.targets.label(lb, selector, spec.usePrivateIp)
        : p.targets.servers(lb, ids, spec, warnings, nodes))) || changed;
    changed = (await p.targets.ips(lb, robotTargets.ips, warnings)) || changed;
    if (changed) lb = await p.lookup.get(lb.id);
    p.asked.set(lb.id, {
      serviceUid: service.metadata!.uid!,
      clusterId,
      spec,
      services,
      targets: selector ? { selector } : { serverIds: ids },
      networkId: p.network.id,
    });
    // Certificates a renewed TLS Secret replaced are no longer on this balancer: delete them if unused.
    await p.ports.synced(service, certificates.secrets);
    return { ingress: ingressOf(lb, spec), warnings };
  }

  /** Brings only the targets in step after the node set changed (see the contract's update). */
  async update(
    req: ServiceRequest,
    name: string,
  ): Promise<{ warnings: ProviderWarning[]; updated?: boolean }> {
    const p = this.#p;
    const { service, spec, nodes, keep } = req;
    // Label-selector targets follow the server labels that syncNodes maintains: nothing to do here
    // but say when the type cannot hold them all.
    if (!spec.nodeSelector && p.facts.clusterId()) {
      const warnings: ProviderWarning[] = [];
      const type = (await p.catalog.get()).loadBalancerTypes.get(spec.type ?? "lb11");
      warnTooManyTargets(desiredServerIds(nodes, spec, p.robot.enabled).ids.length, type, warnings);
      const updated = await p.targets.robotIfChanged(
        name,
        spec,
        nodes,
        warnings,
        () => p.lookup.findOwned(name, service, spec).catch(ignoreRefused),
      );
      return { warnings, updated };
    }
    // A same-named balancer we may not take was reported by the last ensure: leave it alone here.
    const lb = await p.lookup.findOwned(name, service, spec).catch(ignoreRefused);
    const { ids, warnings } = desiredServerIds(nodes, spec, p.robot.enabled, keep);
    const robotTargets = await robotTargetIps(selectedNodes(nodes, spec, keep), spec.usePrivateIp, p.robot);
    warnings.push(...robotTargets.warnings);
    if (!lb) return { warnings, updated: false };
    let changed = await p.targets.servers(lb, ids, spec, warnings, nodes);
    changed = (await p.targets.ips(lb, robotTargets.ips, warnings)) || changed;
    const asked = p.asked.get(lb.id);
    if (asked) asked.targets = { serverIds: ids };
    return { warnings, updated: changed };
  }

  /** Attributes by plan (plan.ts) and execution (actions.ts), the network step between. */
  async #reconcileAttributes(
    lb: LB,
    spec: LoadBalancerSpec,
    owner: Parameters<typeof planShape>[2],
  ): Promise<boolean> {
    const p = this.#p;
    const run = async (actions: LbAction[]) => {
      for (const action of actions) await executeLbAction(p.client, p.actions, lb.id, action);
      return actions.length > 0;
    };
    let changed = await run(planShape(lb, spec, owner));
    changed = (await reconcileNetwork(p.client, p.actions, lb, spec, p.network.id)) || changed;
    return (await run(planExposure(lb, spec))) || changed;
  }

  /** Services (ports) by plan and execution. */
  async #reconcileServices(lb: LB, desired: DesiredService[]): Promise<boolean> {
    const actions = planServices(lb, desired);
    for (const action of actions) await executeLbAction(this.#p.client, this.#p.actions, lb.id, action);
    return actions.length > 0;
  }
}

/** A same-named balancer we may not take was reported by the last ensure: treated as none here. */
function ignoreRefused(err: unknown): undefined {
  if (rootCause(err) instanceof TerminalError) return undefined;
  throw err;
}
