/**
 * The Service room's shared state: what its loops (the Service sync, the node sync, the housekeeping,
 * the firewall follower and the triggers) read about which Services are served and what their
 * balancers target. One value each loop is given, instead of callbacks into the controller.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type { Flags } from "../../config/flags.ts";
import type { InformerFactory } from "../../kube/informer_factory.ts";
import { objectKey } from "../../kube/informer.ts";
import { NODES, SERVICES } from "../../kube/resources.ts";
import type { LoadBalancers } from "../../providers/provider.ts";
import type { Clock } from "../../lib/clock.ts";
import { logger } from "../../lib/log.ts";
import { nodeSet, NodeSetMemory } from "./nodes.ts";
import { CarriedServices } from "./carried.ts";
import { hasFinalizer } from "./writes.ts";

/** The flags the book reads. */
export type BookFlags = Pick<Flags, "clusterName" | "loadBalancerClass" | "loadBalancerClassExclusive">;

/** What one Service's balancer should target: the node set's key and the Nodes kept while draining. */
export interface Selection {
  target: string;
  keep: Set<string>;
}

/** The Nodes a balancer keeps while they drain, for the provider (nothing when none). */
export function keepOption(keep: Set<string>): { keep?: ReadonlySet<string> } {
  return keep.size ? { keep } : {};
}

/** See the module doc. */
export class ServiceBook {
  /** What each Service's balancer was last synced with, the draining and held Nodes (nodes.ts). */
  readonly nodeSets: NodeSetMemory;
  /** Annotation keys the provider keeps state in: writing them is no reason to sync again. */
  readonly stateKeys = new Set<string>();
  /** Class-less Services an exclusive class still serves (carried.ts). */
  readonly carried: CarriedServices;
  readonly #log = logger("service");

  constructor(
    private readonly informers: InformerFactory,
    private readonly flags: BookFlags,
    private readonly lbs: LoadBalancers,
    clock: Clock,
  ) {
    this.nodeSets = new NodeSetMemory(() => informers.for(NODES).list(), () => clock.now());
    const find = lbs.getLoadBalancer?.bind(lbs);
    this.carried = new CarriedServices(
      find && (async (svc, signal) => (await find(flags.clusterName, svc, signal)) !== undefined),
    );
  }

  /** Every Service the informer has. */
  services(): Service[] {
    return this.informers.for(SERVICES).list();
  }

  /** Whether a Service is ours to serve (type and class). */
  wants(svc: Service): boolean {
    if (svc.spec?.type !== "LoadBalancer") return false;
    const cls = svc.spec.loadBalancerClass;
    if (cls === undefined || cls === null) {
      // Exclusive: Services without a class are another implementation's. One this CCM served before
      // the switch stays served until it goes: a flag never deletes balancers (carried.ts says how
      // "served before" is told).
      return !this.flags.loadBalancerClassExclusive ||
        (hasFinalizer(svc) && this.carried.known(objectKey(svc), svc) !== false);
    }
    return this.flags.loadBalancerClass !== "" && cls === this.flags.loadBalancerClass;
  }

  /** A class-less LoadBalancer Service while only our class is served. */
  classlessUnderExclusive(svc: Service): boolean {
    return this.flags.loadBalancerClassExclusive && svc.spec?.type === "LoadBalancer" &&
      (svc.spec.loadBalancerClass === undefined || svc.spec.loadBalancerClass === null);
  }

  /** Every Service that wants a balancer. */
  wanted(): Service[] {
    return this.services().filter((s) => this.wants(s));
  }

  /** The Services whose last sync succeeded and that still want a balancer. */
  synced(): Service[] {
    return this.services().filter((svc) =>
      this.nodeSets.syncedWith(objectKey(svc)) !== undefined && this.wants(svc) &&
      !svc.metadata?.deletionTimestamp
    );
  }

  /** How long balancers keep a Node that leaves (0: removed at once, as upstream; the provider says). */
  drainMs(): number {
    return this.lbs.nodeTargets?.drainPeriodMs?.() ?? 0;
  }

  /**
   * What the Service's balancer targets, to compare with its last sync: the Nodes the provider says it
   * selects (a node selector, say; else the whole set), and those it keeps while they drain (`keep`).
   */
  selection(key: string, svc: Service, nodes: Node[], set: string): Selection {
    const names = this.lbs.nodeTargets?.selected(svc, nodes);
    const keep = this.nodeSets.keep(key, names, nodes, this.drainMs());
    if (keep.size) {
      this.#log.debug("{key}: keeping {nodes} while they drain", { key, nodes: [...keep].join(", ") });
    }
    if (!names) return { target: set, keep };
    return {
      target: nodeSet(nodes.filter((n) => names.has(n.metadata!.name!) || keep.has(n.metadata!.name!))),
      keep,
    };
  }

  /** Whether a balancer's targets follow Node labels anywhere (then a label change may cost). */
  labelsMatter(): boolean {
    const nodeTargets = this.lbs.nodeTargets;
    if (!nodeTargets) return true;
    return this.services().some((svc) => this.wants(svc) && nodeTargets.selected(svc, []) !== undefined);
  }
}
