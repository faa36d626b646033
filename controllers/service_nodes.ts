/**
 * Which Nodes receive load-balancer traffic, and how the service controller tells node sets apart:
 * upstream's `stableNodeSetPredicates` and node-set comparison, with no state of their own.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { parseGoBool } from "../lib/go_bool.ts";

/** Upstream's label that keeps a Node out of every external load balancer. */
export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
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
