/**
 * Which Nodes receive load-balancer traffic, and how the service controller tells node sets apart:
 * upstream's `stableNodeSetPredicates` and node-set comparison, with no state of their own.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { parseGoBool } from "../lib/go_bool.ts";
import { EXCLUDE_FROM_LB_LABEL } from "../kube/well_known.ts";
import { Departures } from "./service_departures.ts";

/** Upstream's label that keeps a Node out of every external load balancer. */
export const EXCLUDE_LABEL = EXCLUDE_FROM_LB_LABEL;
const AUTOSCALER_TAINT = "ToBeDeletedByClusterAutoscaler";

/** Same labels, same values. */
export function sameLabels(a: Node, b: Node): boolean {
  const x = a.metadata?.labels ?? {};
  const y = b.metadata?.labels ?? {};
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => x[k] === y[k]);
}

/** A Node may receive load-balancer traffic (upstream `stableNodeSetPredicates`). */
export function eligibleNode(node: Node): boolean {
  if (node.metadata?.deletionTimestamp) return false;
  const exclude = node.metadata?.labels?.[EXCLUDE_LABEL];
  // Upstream excludes the Node unless the label reads as Go's false.
  if (exclude !== undefined && parseGoBool(exclude) !== false) return false;
  return !(node.spec?.taints ?? []).some((t) => t.key === AUTOSCALER_TAINT);
}

/** A node set's identity: names with provider IDs, order-free. */
export function nodeSet(nodes: Node[]): string {
  return nodes.map((n) => `${n.metadata?.name}|${n.spec?.providerID ?? ""}`).sort().join(",");
}

/** The eligible Nodes and their set key (see `nodeSet`). */
export interface EligibleNodes {
  nodes: Node[];
  set: string;
}

/**
 * The service controller's one memory of the node set: the eligible Nodes (recomputed only after a
 * Node event, not on every sync), which targets each Service's balancer was last synced with, and
 * which node set the provider's shared node work (server labels) was last done for.
 */
export class NodeSetMemory {
  readonly #listNodes: () => Node[];
  #eligible?: EligibleNodes;
  /** Service key → what its balancer targeted at its last successful sync (a node-set key). */
  readonly #syncedWith = new Map<string, string>();
  #sharedWorkFor?: string;
  readonly #departures: Departures;

  constructor(listNodes: () => Node[], now: () => number = Date.now) {
    this.#listNodes = listNodes;
    this.#departures = new Departures(now);
  }

  /** The eligible Nodes now. */
  eligible(): EligibleNodes {
    if (!this.#eligible) {
      const all = this.#listNodes();
      const nodes = all.filter(eligibleNode);
      this.#departures.observe(nodes, all);
      this.#eligible = { nodes, set: nodeSet(nodes) };
    }
    return this.#eligible;
  }

  /**
   * What balancers target now: the eligible Nodes, and those that left the eligible set less than
   * `drainMs` ago (graceful draining, service_departures.ts).
   */
  targets(drainMs: number): EligibleNodes {
    const eligible = this.eligible();
    const draining = drainMs > 0 ? this.#departures.within(drainMs) : [];
    if (!draining.length) return eligible;
    const nodes = [...eligible.nodes, ...draining];
    return { nodes, set: nodeSet(nodes) };
  }

  /** Milliseconds until a draining Node's `drainMs` are over; undefined: none is draining. */
  nextDrainEnd(drainMs: number): number | undefined {
    return drainMs > 0 ? this.#departures.nextExpiry(drainMs) : undefined;
  }

  /** A Node changed: the eligible set is recomputed at the next `eligible()`. */
  nodesChanged(): void {
    this.#eligible = undefined;
  }

  /** The Service's balancer now targets `targets` (a node-set key). */
  synced(serviceKey: string, targets: string): void {
    this.#syncedWith.set(serviceKey, targets);
  }

  /** What the Service's balancer targeted at its last sync; undefined: never synced (or forgotten). */
  syncedWith(serviceKey: string): string | undefined {
    return this.#syncedWith.get(serviceKey);
  }

  /** The Service is gone, its balancer deleted, or must be synced from scratch. */
  forget(serviceKey: string): void {
    this.#syncedWith.delete(serviceKey);
  }

  /** Whether the shared node work is still to be done for `set`. */
  needsSharedWork(set: string): boolean {
    return set !== this.#sharedWorkFor;
  }

  /** The shared node work is done for `set`. */
  sharedWorkDone(set: string): void {
    this.#sharedWorkFor = set;
  }
}
