/**
 * Graceful draining of load balancer targets: the Nodes that left the eligible set (the exclude
 * label, the autoscaler's taint, deletion) or one balancer's selection (its node selector),
 * remembered for a while so a balancer keeps them as targets until its health checks have failed
 * them — new connections stop, open ones finish — and only then removes them (official CCM #1303).
 * A Node that comes back before then is simply kept.
 *
 * One period for every balancer (they may share targets, as a label selector does): while it runs, a
 * departed Node counts among the targets everywhere, also for a balancer created meanwhile.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";

/** No balancer keeps a departed Node longer than this, whatever its provider asks for. */
export const MAX_DRAIN_MS = 10 * 60_000;

/** A Node that left the eligible set, and when. */
interface Departure {
  node: Node;
  at: number;
}

/** The Nodes that left the eligible set recently. No state beyond the names and times. */
export class Departures {
  readonly #now: () => number;
  /** The eligible Nodes at the last look, by name. */
  #last = new Map<string, Node>();
  readonly #left = new Map<string, Departure>();
  #looked = false;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * The eligible Nodes now, and all Nodes: who left since the last look is recorded (as the Node is
   * now, or as it was last seen if it is gone), who is back is forgotten. `since` tells, on the
   * first look only, when an ineligible Node started to leave, if its record says so.
   */
  observe(eligible: Node[], all: Node[], since?: (node: Node) => number | undefined): void {
    const now = this.#now();
    const next = new Map(eligible.map((n) => [n.metadata!.name!, n]));
    const current = new Map(all.map((n) => [n.metadata!.name!, n]));
    if (!this.#looked && since) {
      // The first look (after a restart, say): a Node whose own record says when it started to
      // leave (the autoscaler's taint, its deletion) and less than the longest period ago drains
      // for what is left of it, as it would have had this process been running all along.
      for (const [name, node] of current) {
        const at = next.has(name) ? undefined : since(node);
        if (at !== undefined && now - at < MAX_DRAIN_MS) {
          this.#left.set(name, { node, at: Math.min(at, now) });
        }
      }
    }
    this.#looked = true;
    for (const [name, node] of this.#last) {
      if (!next.has(name) && !this.#left.has(name)) {
        this.#left.set(name, { node: current.get(name) ?? node, at: now });
      }
    }
    for (const name of next.keys()) this.#left.delete(name);
    for (const [name, d] of this.#left) if (now - d.at >= MAX_DRAIN_MS) this.#left.delete(name);
    this.#last = next;
  }

  /** Whether any Node is being remembered. */
  get any(): boolean {
    return this.#left.size > 0;
  }

  /** The Nodes that left less than `periodMs` ago (bounded by {@link MAX_DRAIN_MS}). */
  within(periodMs: number): Node[] {
    const now = this.#now();
    const period = Math.min(periodMs, MAX_DRAIN_MS);
    return [...this.#left.values()].filter((d) => now - d.at < period).map((d) => d.node);
  }

  /** Milliseconds until the next of them has been gone `periodMs`; undefined when none is left. */
  nextExpiry(periodMs: number): number | undefined {
    const now = this.#now();
    const period = Math.min(periodMs, MAX_DRAIN_MS);
    const left = [...this.#left.values()].map((d) => d.at + period - now).filter((ms) => ms > 0);
    return left.length ? Math.min(...left) : undefined;
  }
}

/** One balancer's selection at the last look, and who left it when. */
interface Selection {
  last: Set<string>;
  left: Map<string, number>;
}

/**
 * Nodes that left one balancer's own selection (a node selector whose Service or Node labels
 * changed) while staying in the cluster, remembered per Service so its balancer keeps them for the
 * drain period as it keeps Nodes that left the eligible set.
 */
export class SelectionDepartures {
  readonly #now: () => number;
  readonly #byService = new Map<string, Selection>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * The Service's selection now (names) among the Nodes its balancer may target (`present`): who
   * left it since the last look is recorded, who is back is forgotten. Returns the names to keep:
   * left less than `periodMs` ago and still present. The first look records nothing.
   */
  observe(service: string, selected: Set<string>, present: Set<string>, periodMs: number): Set<string> {
    const now = this.#now();
    const period = Math.min(periodMs, MAX_DRAIN_MS);
    const known = this.#byService.get(service);
    const left = known?.left ?? new Map<string, number>();
    for (const name of known?.last ?? []) {
      if (!selected.has(name) && !left.has(name)) left.set(name, now);
    }
    const keep = new Set<string>();
    for (const [name, at] of left) {
      if (selected.has(name) || !present.has(name) || now - at >= period) left.delete(name);
      else keep.add(name);
    }
    this.#byService.set(service, { last: selected, left });
    return keep;
  }

  /** Milliseconds until the next kept Node's period is over; undefined when none is kept. */
  nextExpiry(periodMs: number): number | undefined {
    const now = this.#now();
    const period = Math.min(periodMs, MAX_DRAIN_MS);
    let next: number | undefined;
    for (const { left } of this.#byService.values()) {
      for (const at of left.values()) {
        const ms = at + period - now;
        if (ms > 0 && (next === undefined || ms < next)) next = ms;
      }
    }
    return next;
  }

  /** The Service is gone (or synced from scratch): its selection is forgotten. */
  forget(service: string): void {
    this.#byService.delete(service);
  }
}
