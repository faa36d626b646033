/**
 * A node sync: the Services whose balancer's node set (as its provider selects it) differs from its
 * last sync are found without a cloud call; the shared work (server labels) follows the node set;
 * then the stale balancers get their targets updated, `concurrentServiceSyncs` at a time, with the
 * events upstream records (`UpdatedLoadBalancer` for work done, `UpdateLoadBalancerFailed` naming at
 * most 20 Nodes); a failed one is retried as a Service sync with backoff.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { objectKey } from "../../kube/informer.ts";
import { SERVICES } from "../../kube/resources.ts";
import type { LoadBalancers } from "../../providers/provider.ts";
import type { ServiceWarnings } from "./warnings.ts";
import { logger } from "../../lib/log.ts";

import { targetable } from "./nodes.ts";
import { keepOption, type Selection, type ServiceBook } from "./book.ts";

const log = logger("service", "nodes");

/** What a node sync works with. */
export interface NodeSyncParts {
  /** The room's shared state: which Services are served, what their balancers target. */
  book: ServiceBook;
  lbs: LoadBalancers;
  /** Asks for the node syncs that end drains and holds. */
  scheduleDrainEnd(): void;
  clusterName: string;
  concurrency: number;
  recorder: EventRecorder;
  warnings: ServiceWarnings;
  /** Retries a Service whose update failed (with its backoff). */
  retry(key: string): void;
  /**
   * A balancer's targets went from none to some, or from some to none: whether it needs the
   * firewall's opening changed (a node selector's balancer made before any Node was in its pool).
   */
  targetableChanged?(key: string): void;
}

/** Updates the targets of every load balancer whose node set changed; never throws for one Service. */
export async function syncNodes(parts: NodeSyncParts, signal: AbortSignal): Promise<void> {
  const { book } = parts;
  const { nodeSets } = book;
  const { nodes, set } = nodeSets.targets(book.drainMs());
  const selections = new Map<string, Selection>();
  const stale = book.services().filter((svc) => {
    const key = objectKey(svc);
    const last = nodeSets.syncedWith(key);
    if (last === undefined || !book.wants(svc) || svc.metadata?.deletionTimestamp) return false;
    const selection = book.selection(key, svc, nodes, set);
    selections.set(key, selection);
    return last !== selection.target;
  });
  log.debug("node sync: {stale} of {all} balancers to update, {nodes} target Nodes", {
    stale: stale.map(objectKey).join(", ") || "none",
    all: selections.size,
    nodes: nodes.length,
  });
  // A draining Node leaves the balancers once their health checks have had time to fail it.
  parts.scheduleDrainEnd();
  // Shared work (server labels) follows the node set itself, whether or not a Service is stale:
  // after a restart or a run of failed syncs none may be, and the labels must not lag.
  // Only while some Service wants a load balancer: the first ensure labels the servers anyway.
  const anyWanted = book.services().some((svc) => book.wants(svc));
  if (parts.lbs.nodeTargets && anyWanted && nodeSets.needsSharedWork(set)) {
    await parts.lbs.nodeTargets.sync(parts.clusterName, nodes, signal);
    nodeSets.sharedWorkDone(set);
  }
  const limit = Math.max(1, parts.concurrency);
  for (let i = 0; i < stale.length; i += limit) {
    await Promise.all(
      stale.slice(i, i + limit).map((svc) => updateOne(parts, svc, selections, nodes, signal)),
    );
  }
}

async function updateOne(
  parts: NodeSyncParts,
  svc: Service,
  selections: Map<string, Selection>,
  nodes: Node[],
  signal: AbortSignal,
): Promise<void> {
  const key = objectKey(svc);
  try {
    const selection = selections.get(key)!;
    const before = parts.book.nodeSets.syncedWith(key);
    const result = await parts.lbs.updateLoadBalancer({
      clusterName: parts.clusterName,
      service: svc,
      nodes,
      ...keepOption(selection.keep),
    }, signal);
    parts.warnings.say(svc, result?.warnings);
    parts.book.nodeSets.synced(key, selection.target);
    if (targetable(before) !== targetable(selection.target)) parts.targetableChanged?.(key);
    // Events only for work done: a label-selector balancer or a missing one was not updated.
    if (result && result.updated === false) return;
    parts.recorder.event(
      SERVICES,
      svc,
      "Normal",
      "UpdatedLoadBalancer",
      "Updated load balancer with new hosts",
    );
  } catch (err) {
    if (signal.aborted) return; // cancelled, not failed
    const names = nodes.slice(0, 20).map((n) => n.metadata?.name).join(", ");
    parts.recorder.event(
      SERVICES,
      svc,
      "Warning",
      "UpdateLoadBalancerFailed",
      `Error updating load balancer with new hosts ${names} [node names limited, total number of nodes: ${nodes.length}], error: ${
        (err as Error).message
      }`,
    );
    parts.retry(key);
  }
}
