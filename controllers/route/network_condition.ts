/**
 * The Node condition `NetworkUnavailable` kept in step with the routes: `False` (`RouteCreated`) once
 * every route a Node wants exists, `True` (`NoRouteCreated`) otherwise, saying so when the network
 * holds no more routes. Written only when it changes, as upstream.
 *
 * @module
 */
import type { Node, NodeCondition } from "kubernetes-types/core/v1.d.ts";
import type { KubeClient } from "../../kube/client.ts";
import { NODES } from "../../kube/resources.ts";
import { logger } from "../../lib/log.ts";
import type { Wanted } from "./route_wants.ts";

/**
 * Sets the condition on each Node that wants routes: `done` names those whose routes all exist,
 * `limited` those left without one for want of room in the network.
 */
export async function syncNetworkConditions(
  client: KubeClient,
  nodes: Node[],
  wanted: Wanted[],
  done: Set<string>,
  limited: Map<string, Wanted>,
): Promise<void> {
  const withRoutes = new Set(wanted.map((w) => w.node.metadata!.name!));
  for (const node of nodes) {
    const name = node.metadata!.name!;
    if (!withRoutes.has(name)) continue;
    const ok = done.has(name);
    const current = (node.status?.conditions ?? []).find((c) => c.type === "NetworkUnavailable");
    const status = ok ? "False" : "True";
    const reason = ok ? "RouteCreated" : "NoRouteCreated";
    const message = ok
      ? "RouteController created a route"
      : limited.has(name)
      ? "RouteController failed to create a route: the network holds no more routes"
      : "RouteController failed to create a route";
    // The message is compared only where ours says more (the limit): no write otherwise, as upstream.
    const same = current?.status === status && current.reason === reason &&
      (!limited.has(name) || current.message === message);
    if (same) continue;
    const now = new Date().toISOString();
    const condition: NodeCondition = {
      type: "NetworkUnavailable",
      status,
      reason,
      message,
      lastTransitionTime: now,
      lastHeartbeatTime: now,
    };
    try {
      await client.patch(NODES, name, "strategic", { status: { conditions: [condition] } }, {
        subresource: "status",
      });
    } catch (err) {
      logger("route").warning("cannot set NetworkUnavailable on node {name}: {error}", {
        name,
        error: (err as Error).message,
      });
    }
  }
}
