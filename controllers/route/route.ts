/**
 * The route controller: one route per Node and IPv4 pod CIDR (gateway = the Node's InternalIP),
 * stale routes inside the cluster CIDR removed, routes outside it never touched, and the Node
 * condition `NetworkUnavailable` kept in step.
 *
 * Runs are event-driven (Node added or deleted, pod CIDRs or addresses changed), at most one per
 * 10 s (or per `--route-reconciliation-period` when that is shorter), plus a full run every
 * `--route-reconciliation-period`. A failed run is retried with backoff; a steady state costs one
 * network read per run and no writes.
 *
 * A route through a machine that has been none of this cluster's Nodes since the CCM started (the
 * provider says who holds the gateway) is another cluster's, in one network with an overlapping
 * cluster CIDR: it is never deleted or displaced, and a pod CIDR it blocks gets one `RouteConflict`
 * Warning and a metric, not a fight of writes (security probe N8). A route through a machine whose
 * Node left while the CCM was down counts as foreign too: left alone, and named if it blocks.
 *
 * @module
 */
import { RouteRoom } from "./route_room.ts";
import { internalIp, RouteWants, type Wanted } from "./route_wants.ts";
import { syncNetworkConditions } from "./network_condition.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { type Controller, type ControllerContext, partMissing } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import { NODES } from "../../kube/resources.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import type { Route, Routes } from "../../providers/provider.ts";
import { type Cidr, cidrContains, formatIp, lastAddress, parseCidr } from "../../lib/cidr.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";
import { hasTaint, managedNode, podCidrs, UNINITIALIZED_TAINT } from "../node_metadata.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { LoopHealth } from "../../lib/loop_health.ts";
import { LimitReachedError, rootCause, TerminalError } from "../../providers/errors.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type RouteFlags = Pick<
  Flags,
  "clusterName" | "clusterCidr" | "configureCloudRoutes" | "routeReconciliationPeriod"
>;

/** The component name on events. */
export const ROUTE_COMPONENT = "route_controller";
const KEY = "routes";

/** Builds the controller, or says why it cannot run. */
export function routeController(ctx: ControllerContext<RouteFlags>): Controller | { disabled: string } {
  const routes = ctx.provider.routes;
  if (!ctx.flags.configureCloudRoutes) return { disabled: "--configure-cloud-routes=false" };
  if (!routes) {
    return partMissing(ctx.provider, "routes", "offers no routes");
  }
  const clusterCidrs = ctx.flags.clusterCidr.split(",").map((c) => parseCidr(c.trim())).filter((
    c,
  ): c is Cidr => !!c);
  if (clusterCidrs.length === 0) return { disabled: "--cluster-cidr is not set" };
  return new RouteController(ctx, routes, clusterCidrs);
}

class RouteController implements Controller {
  readonly name = "node-route-controller";
  readonly #ctx: ControllerContext<RouteFlags>;
  readonly #routes: Routes;
  readonly #clusterCidrs: Cidr[];
  readonly #queue: WorkQueue;
  readonly #recorder;
  readonly #log = logger("route");
  readonly #minIntervalMs: number;
  #lastRun = 0;
  /** The routes the Nodes want, with what was told of those that get none (route_wants.ts). */
  readonly #wants: RouteWants;
  /** Nodes the last run skipped because their InternalIP was still coming. */
  #awaitingAddress = new Set<string>();
  /**
   * Every machine that has been one of this cluster's Nodes since this process started: a route
   * through one is ours (stale once its Node is gone); through any other machine, another cluster's.
   */
  readonly #ourMachines = new Set<string>();
  /**
   * Routes this process made (`cidr|gateway`) whose machine is not known yet: a Node seen with its
   * address before its provider ID (the node controller writes them apart; a crash or a lagging view
   * shows the state between) still got its route, and that route is ours even if the Node goes
   * before its provider ID is ever seen (explorer seed 101: such a route was left for good).
   */
  readonly #made = new Set<string>();
  /** Conflicts already reported (`cidr|node UID|machine`). */
  readonly #toldConflict = new Set<string>();
  readonly #foreignGauge;
  /** Room for routes in the network (route_room.ts). */
  readonly #room: RouteRoom;
  /** Creates that cannot succeed until the Node changes, already reported (`uid|message`). */
  readonly #toldTerminal = new Set<string>();

  constructor(ctx: ControllerContext<RouteFlags>, routes: Routes, clusterCidrs: Cidr[]) {
    this.#ctx = ctx;
    this.#routes = routes;
    this.#clusterCidrs = clusterCidrs;
    this.#minIntervalMs = Math.min(10_000, ctx.flags.routeReconciliationPeriod);
    this.#queue = new WorkQueue("route", {
      clock: ctx.clock,
      baseDelayMs: this.#minIntervalMs,
      // Upstream retries a failed run at the next period; a 30 s cap keeps a few early failures (a
      // network still being set up) from delaying routes by minutes, at one network read per 30 s.
      maxDelayMs: Math.max(this.#minIntervalMs, 30_000),
      metrics: ctx.metrics,
    });
    this.#recorder = ctx.recorder(ROUTE_COMPONENT);
    this.#wants = new RouteWants(this.#recorder, (node) => routes.unroutable?.(node));
    this.#foreignGauge = ctx.metrics.gauge(
      "route_foreign_routes",
      "Routes inside the cluster CIDR through machines that are not Nodes of this cluster (left alone).",
    );
    this.#room = new RouteRoom(ctx, this.#recorder);
    ctx.informers.for(NODES).addHandlers({
      onAdd: () => this.#trigger(),
      onDelete: () => this.#trigger(),
      onUpdate: (a, b) => {
        const cidrs = (n: Node) => JSON.stringify(podCidrs(n));
        const internal = (n: Node) =>
          JSON.stringify((n.status?.addresses ?? []).filter((x) => x.type === "InternalIP"));
        if (cidrs(a) === cidrs(b) && internal(a) === internal(b)) return;
        // A new Node's route should not wait out the rate limit: it only just became routable.
        if (this.#awaitingAddress.has(b.metadata?.name ?? "") && internalIp(b)) this.#queue.add(KEY);
        else this.#trigger();
      },
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    const clock = this.#ctx.clock;
    const periodic = clock.setInterval(() => this.#trigger(), this.#ctx.flags.routeReconciliationPeriod);
    signal.addEventListener("abort", () => {
      clock.clearInterval(periodic);
      this.#queue.shutDown();
    }, { once: true });
    this.#trigger();
    await runWorkers(
      this.#queue,
      (_key, cancel) => withPriority("route", () => this.#reconcile(cancel)),
      {
        policy: reconcilePolicy,
        signal,
        loop: { health: new LoopHealth(this.#ctx.metrics, this.#ctx.conditions), name: () => "route-sync" },
      },
    );
  }

  #trigger(): void {
    this.#queue.addAfter(KEY, Math.max(0, this.#lastRun + this.#minIntervalMs - this.#ctx.clock.now()));
  }

  async #reconcile(signal: AbortSignal): Promise<void> {
    this.#lastRun = this.#ctx.clock.now();
    const clusterName = this.#ctx.flags.clusterName;
    const all = this.#ctx.informers.for(NODES).list().filter((n) => !n.metadata?.deletionTimestamp);
    // A Node that is not the cloud's (labelled so) gets no route, and a route through it to one of
    // its own pod CIDRs (made by its owner, or before the label) is left as it is. Only its own: its
    // kubelet may report any address, and a stale route through that address to another range must
    // not be pinned (review Q8).
    const nodes = all.filter(managedNode);
    const unmanagedRoutes = new Set(
      all.filter((n) => !managedNode(n)).flatMap((n) =>
        podCidrs(n).map((c) => `${internalIp(n)}|${canonical(c)}`)
      ),
    );
    const wanted = this.#wants.of(nodes, all);
    const existing = await this.#routes.listRoutes(clusterName, signal);
    const gatewayOf = (r: Route) => r.targetNodeAddresses?.find((a) => a.type === "InternalIP")?.address;
    // The contract: a route names its target Node. A provider whose routes know only a gateway
    // address (Hetzner's) reports no Node name, and is matched by the Node's InternalIP instead;
    // a named route whose gateway is known must also still point at the Node's InternalIP.
    const matches = (r: Route, w: Wanted) => {
      if (w.cidr !== canonical(r.destinationCIDR)) return false;
      const gateway = gatewayOf(r);
      if (r.targetNode) {
        return r.targetNode === w.node.metadata!.name && (gateway === undefined || gateway === w.gateway);
      }
      return gateway !== undefined && gateway === w.gateway;
    };
    const isWanted = (r: Route) => wanted.some((w) => matches(r, w));
    for (const n of nodes) if (n.spec?.providerID) this.#ourMachines.add(n.spec.providerID);
    for (const r of existing) {
      const made = `${canonical(r.destinationCIDR)}|${gatewayOf(r)}`;
      if (!r.gatewayProviderID || !this.#made.delete(made)) continue;
      this.#ourMachines.add(r.gatewayProviderID);
    }
    const foreign = (r: Route) => !!r.gatewayProviderID && !this.#ourMachines.has(r.gatewayProviderID);
    this.#foreignGauge.set({}, existing.filter((r) => this.#responsibleFor(r) && foreign(r)).length);
    const keyOf = (w: Wanted) => `${w.cidr}|${w.node.metadata!.name}`;
    // Delete stale routes we are responsible for: inside the cluster CIDR, not wanted as they are.
    const failures: string[] = [];
    let count = existing.length;
    for (const route of existing) {
      if (!this.#responsibleFor(route) || isWanted(route) || foreign(route)) continue;
      if (unmanagedRoutes.has(`${gatewayOf(route)}|${canonical(route.destinationCIDR)}`)) continue;
      try {
        await this.#routes.deleteRoute(clusterName, route, signal);
        count--;
        this.#log.info("deleted route {destination} via {gateway}", {
          destination: route.destinationCIDR,
          gateway: gatewayOf(route),
        });
      } catch (err) {
        signal.throwIfAborted(); // cancelled, not failed
        failures.push(`delete ${route.destinationCIDR}: ${(err as Error).message}`);
      }
    }
    const present = new Set(wanted.filter((w) => existing.some((r) => matches(r, w))).map(keyOf));
    const done = new Set<string>(); // node names whose routes all exist
    const failedNodes = new Set<string>();
    /** Nodes left without a route for want of room in the network, with the count then. */
    const limited = new Map<string, Wanted>();
    // None beyond what the network holds (a refusal lowers it until routes are freed).
    const cap = this.#room.cap(count, this.#routes.maxRoutes);
    this.#awaitingAddress.clear();
    for (const w of wanted) {
      const name = w.node.metadata!.name!;
      if (present.has(keyOf(w))) continue;
      const blocker = existing.find((r) => foreign(r) && canonical(r.destinationCIDR) === w.cidr);
      if (blocker) {
        this.#reportConflict(w.node, w.cidr, blocker);
        continue;
      }
      // Not initialized yet: its InternalIP is still coming (the Node's update brings another run).
      if (!w.gateway && hasTaint(w.node, UNINITIALIZED_TAINT)) {
        this.#awaitingAddress.add(name);
        continue;
      }
      if (count >= cap) {
        limited.set(name, w);
        continue;
      }
      const started = this.#ctx.clock.now();
      try {
        if (!w.gateway) throw new TerminalError("the node has no InternalIP address");
        await this.#routes.createRoute(clusterName, w.node.metadata?.uid ?? name, {
          name: "",
          targetNode: name,
          targetNodeAddresses: w.node.status?.addresses,
          destinationCIDR: w.cidr,
        }, signal);
        present.add(keyOf(w));
        if (!w.node.spec?.providerID) this.#made.add(`${w.cidr}|${w.gateway}`);
        count++;
        this.#log.info("created route {cidr} via {gateway} for node {name}", {
          cidr: w.cidr,
          gateway: w.gateway,
          name,
        });
      } catch (err) {
        signal.throwIfAborted(); // cancelled, not failed: no event
        if (rootCause(err) instanceof LimitReachedError) {
          // The cloud's own count said no: no more creates until routes are freed (never a loop).
          this.#room.refused(count);
          limited.set(name, w);
          continue;
        }
        failedNodes.add(name);
        const message = (err as Error).message;
        // Cannot succeed until the Node changes (which brings a run): said once, not retried.
        const terminal = rootCause(err) instanceof TerminalError;
        if (terminal) {
          const told = `${w.node.metadata?.uid}|${message}`;
          if (this.#toldTerminal.has(told)) continue;
          this.#toldTerminal.add(told);
        } else failures.push(`create ${w.cidr} for ${name}: ${message}`);
        this.#recorder.event(
          NODES,
          w.node,
          "Warning",
          "FailedToCreateRoute",
          `Could not create route ${w.cidr} ${w.gateway ?? "(no gateway)"} for node ${name} after ${
            this.#ctx.clock.now() - started
          }ms: ${message}`,
        );
      }
    }
    for (const w of wanted) {
      if (present.has(keyOf(w)) && !failedNodes.has(w.node.metadata!.name!)) {
        done.add(w.node.metadata!.name!);
      }
    }
    this.#room.report([...limited.values()], count, cap);
    await syncNetworkConditions(this.#ctx.client, nodes, wanted, done, limited);
    if (failures.length) throw new Error(`route reconciliation incomplete: ${failures.join("; ")}`);
  }

  /** One Warning per Node, pod CIDR and blocking machine. */
  #reportConflict(node: Node, cidr: string, blocker: Route): void {
    const key = `${cidr}|${node.metadata?.uid}|${blocker.gatewayProviderID}`;
    if (this.#toldConflict.has(key)) return;
    this.#toldConflict.add(key);
    const gateway = blocker.targetNodeAddresses?.find((a) => a.type === "InternalIP")?.address;
    this.#recorder.event(
      NODES,
      node,
      "Warning",
      "RouteConflict",
      `Pod CIDR ${cidr} is already routed via ${
        gateway ?? "another gateway"
      } (${blocker.gatewayProviderID}), ` +
        "which is not a Node of this cluster: another cluster's CIDR overlaps? The route is left alone; give " +
        "the clusters distinct --cluster-cidr ranges or delete that route",
    );
    this.#log.warning("pod CIDR {cidr} of node {name} is routed via {machine}, not a Node of this cluster", {
      cidr,
      name: node.metadata?.name,
      machine: blocker.gatewayProviderID,
    });
  }

  /** The route's destination starts or ends inside a cluster CIDR (upstream `isResponsibleForRoute`). */
  #responsibleFor(route: Route): boolean {
    const dest = parseCidr(route.destinationCIDR);
    if (!dest) return false;
    return this.#clusterCidrs.some((c) =>
      cidrContains(c, formatIp(dest.family, dest.network)) ||
      cidrContains(c, formatIp(dest.family, lastAddress(dest)))
    );
  }
}

function canonical(cidr: string): string {
  return parseCidr(cidr)?.text ?? cidr;
}
