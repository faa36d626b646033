/**
 * Graceful draining of load balancer targets: the Nodes that left the eligible set (the exclude
 * label, the autoscaler's taint, deletion), remembered for a while so a balancer keeps them as
 * targets until its health checks have failed them — new connections stop, open ones finish — and
 * only then removes them (official CCM #1303). A Node that comes back before then is simply kept.
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

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * The eligible Nodes now, and all Nodes: who left since the last look is recorded (as the Node is
   * now, or as it was last seen if it is gone), who is back is forgotten.
   */
  observe(eligible: Node[], all: Node[]): void {
    const now = this.#now();
    const next = new Map(eligible.map((n) => [n.metadata!.name!, n]));
    const current = new Map(all.map((n) => [n.metadata!.name!, n]));
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
