/**
 * Which Nodes receive load-balancer traffic, and how the service controller tells node sets apart:
 * upstream's `stableNodeSetPredicates` and node-set comparison, with no state of their own.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { parseGoBool } from "../../lib/go_bool.ts";
import { EXCLUDE_FROM_LB_LABEL } from "../../kube/well_known.ts";
import { managedNode } from "../node_metadata.ts";
import { Departures, SelectionDepartures } from "./departures.ts";
import { AUTOSCALER_TAINT, type HeldNode, NodeChangeGuard } from "./node_change_guard.ts";

/** Node syncs of clusters below this size are never paced (see `syncPaceMs`). */
const PACE_FROM_NODES = 1000;
const MAX_PACE_MS = 10_000;

/** Upstream's label that keeps a Node out of every external load balancer. */
export const EXCLUDE_LABEL = EXCLUDE_FROM_LB_LABEL;

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
  // Not the cloud's: no balancer can target it.
  if (!managedNode(node)) return false;
  return !(node.spec?.taints ?? []).some((t) => t.key === AUTOSCALER_TAINT);
}

/**
 * When an ineligible Node started to leave, if its record says so and nothing else keeps it out:
 * the autoscaler's taint carries the time it was set (Unix seconds, or `timeAdded`), a deletion its
 * timestamp. A Node excluded by label may never have been a target, so it gets no time.
 */
export function leavingSince(node: Node): number | undefined {
  const exclude = node.metadata?.labels?.[EXCLUDE_LABEL];
  if (exclude !== undefined && parseGoBool(exclude) !== false) return undefined;
  const times: number[] = [];
  const deleted = Date.parse(node.metadata?.deletionTimestamp ?? "");
  if (Number.isFinite(deleted)) times.push(deleted);
  const taint = (node.spec?.taints ?? []).find((t) => t.key === AUTOSCALER_TAINT);
  if (taint) {
    const added = taint.timeAdded ? Date.parse(taint.timeAdded) : NaN;
    const value = /^[0-9]{1,12}$/.test(taint.value ?? "") ? Number(taint.value) * 1000 : NaN;
    const at = Number.isFinite(added) ? added : value;
    if (Number.isFinite(at)) times.push(at);
  }
  return times.length ? Math.min(...times) : undefined;
}

/** A node set's identity: names with provider IDs, order-free. */
export function nodeSet(nodes: Node[]): string {
  return nodes.map((n) => `${n.metadata?.name}|${n.spec?.providerID ?? ""}`).sort().join(",");
}

/**
 * Whether a node-set key (see {@link nodeSet}) names a Node a balancer can target: one with a provider
 * ID (a Node not yet initialized is in the set, but no target). Unknown (undefined) reads as none.
 */
export function targetable(set: string | undefined): boolean {
  return !!set && set.split(",").some((entry) => !entry.endsWith("|"));
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
  readonly #selections: SelectionDepartures;

  readonly #guard: NodeChangeGuard;
  readonly #now: () => number;
  /** When a held Node may be taken again (then the eligible set is recomputed). */
  #releaseAt?: number;
  /** Told of each Node whose changes are held from now on (node_change_guard.ts). */
  onHeld: (held: HeldNode) => void = () => {};
  /** Whether some balancer selects Nodes by label (then every label change counts, not only exclusion). */
  labelsMatter: () => boolean = () => true;
  /** Nodes the last recomputation of the eligible set went through. */
  #seen = 0;

  constructor(listNodes: () => Node[], now: () => number = Date.now, guard?: NodeChangeGuard) {
    this.#listNodes = listNodes;
    this.#now = now;
    this.#departures = new Departures(now);
    this.#selections = new SelectionDepartures(now);
    this.#guard = guard ?? new NodeChangeGuard(undefined, undefined, now);
  }

  /**
   * The eligible Nodes now, as the controller may see them: a Node whose labels change too often is
   * seen as it was last taken (node_change_guard.ts).
   */
  eligible(): EligibleNodes {
    if (this.#releaseAt !== undefined && this.#now() >= this.#releaseAt) this.#eligible = undefined;
    if (!this.#eligible) {
      const view = this.#guard.view(this.#listNodes(), this.labelsMatter());
      const all = view.nodes;
      this.#releaseAt = view.nextReleaseMs === undefined ? undefined : this.#now() + view.nextReleaseMs;
      for (const held of view.held) this.onHeld(held);
      const nodes = all.filter(eligibleNode);
      this.#departures.observe(nodes, all, leavingSince);
      this.#eligible = { nodes, set: nodeSet(nodes) };
      this.#seen = view.nodes.length;
    }
    return this.#eligible;
  }

  /**
   * How long a node sync asked for by a Node event waits: 0 below 1000 Nodes (at once, as upstream),
   * else 1 ms per 20 Nodes (250 ms at 5000, at most 10 s). Recomputing the eligible set costs ~6 µs a
   * Node; recomputed after every Node event, a burst of 5000 joining Nodes cost ~250 s of CPU while
   * every other controller waited. Paced, the recomputation takes about a tenth of the thread.
   */
  syncPaceMs(): number {
    return this.#seen < PACE_FROM_NODES ? 0 : Math.min(MAX_PACE_MS, this.#seen / 20);
  }

  /**
   * What balancers target now: the eligible Nodes, and those that left the eligible set less than
   * `drainMs` ago (graceful draining, departures.ts).
   */
  targets(drainMs: number): EligibleNodes {
    const eligible = this.eligible();
    const draining = drainMs > 0 ? this.#departures.within(drainMs) : [];
    if (!draining.length) return eligible;
    const nodes = [...eligible.nodes, ...draining];
    return { nodes, set: nodeSet(nodes) };
  }

  /**
   * The Nodes among `targets` the Service's balancer keeps although its own selection (`selected`
   * names, undefined: all of `targets`) dropped them less than `drainMs` ago (departures.ts).
   */
  keep(serviceKey: string, selected: Set<string> | undefined, targets: Node[], drainMs: number): Set<string> {
    if (drainMs <= 0) return new Set();
    const present = new Set(targets.map((n) => n.metadata!.name!));
    return this.#selections.observe(serviceKey, selected ?? present, present, drainMs);
  }

  /** Milliseconds until a draining Node's `drainMs` are over; undefined: none is draining. */
  nextDrainEnd(drainMs: number): number | undefined {
    if (drainMs <= 0) return undefined;
    const ends = [this.#departures.nextExpiry(drainMs), this.#selections.nextExpiry(drainMs)]
      .filter((ms): ms is number => ms !== undefined);
    return ends.length ? Math.min(...ends) : undefined;
  }

  /** Milliseconds until a held Node may be taken again; undefined: none is held. */
  nextRelease(): number | undefined {
    return this.#releaseAt === undefined ? undefined : Math.max(0, this.#releaseAt - this.#now());
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
    this.#selections.forget(serviceKey);
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
