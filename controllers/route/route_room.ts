/**
 * Room for routes in the network (the provider's `maxRoutes`, or what the cloud said when it refused
 * one more): the route controller creates none beyond it, and each Node left without a route is told
 * once (`RouteLimitReached`) and counted in a gauge, instead of a create retried every run.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { ControllerContext } from "../manager.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { NODES } from "../../kube/resources.ts";
import { logger } from "../../lib/log.ts";

/** A Node waiting for room, with the pod CIDR it wants routed. */
export interface Waiting {
  node: Node;
  cidr: string;
}

/** See the module doc. */
export class RouteRoom {
  readonly #recorder: EventRecorder;
  readonly #gauge;
  readonly #told = new Set<string>();
  readonly #log = logger("route");
  /** The network's route count when the cloud last refused one more; creates wait until it falls. */
  #hitAt?: number;

  constructor(ctx: ControllerContext<unknown>, recorder: EventRecorder) {
    this.#recorder = recorder;
    this.#gauge = ctx.metrics.gauge(
      "route_limit_unrouted_nodes",
      "Nodes without a route because the network holds no more routes (everyone's together).",
    );
  }

  /** The most routes to have now, given `count` and what the provider says it holds. */
  cap(count: number, maxRoutes: number | undefined): number {
    // Room freed (someone deleted routes): try again.
    if (this.#hitAt !== undefined && count < this.#hitAt) this.#hitAt = undefined;
    return Math.min(maxRoutes ?? Infinity, this.#hitAt ?? Infinity);
  }

  /** The cloud refused a route at `count` routes. */
  refused(count: number): void {
    this.#hitAt = count;
  }

  /** One Warning per waiting Node (until it gets its route), the gauge, a log line. */
  report(waiting: Waiting[], count: number, cap: number): void {
    this.#gauge.set({}, waiting.length);
    const uids = new Set(waiting.map((w) => w.node.metadata!.uid!));
    for (const uid of this.#told) if (!uids.has(uid)) this.#told.delete(uid);
    for (const w of waiting) {
      if (this.#told.has(w.node.metadata!.uid!)) continue;
      this.#told.add(w.node.metadata!.uid!);
      const limit = Number.isFinite(cap) ? `at most ${cap} routes` : "no more routes";
      this.#recorder.event(
        NODES,
        w.node,
        "Warning",
        "RouteLimitReached",
        `No route for pod CIDR ${w.cidr}: the network holds ${limit} (everyone's together) and has ${count}. ` +
          "The Node gets its route once routes are freed; a cluster this large routes pods with its CNI " +
          "instead (network routes off)",
      );
    }
    if (waiting.length) {
      this.#log.warning("{count} nodes have no route: the network holds no more routes", {
        count: waiting.length,
      });
    }
  }
}
