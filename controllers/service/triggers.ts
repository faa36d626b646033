/**
 * What makes the service controller work: a Service's change (spec, annotations, deletion, identity;
 * not the annotations the provider keeps its state in), admitted from its namespace's budget
 * (change_budget.ts), and a Node's change that can alter a balancer's targets (eligibility, provider ID,
 * the exclusion label, and labels where a node selector reads them), which asks for one node sync;
 * a TLS Secret's change syncs the Services that name it.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { objectKey } from "../../kube/informer.ts";
import type { InformerFactory } from "../../kube/informer_factory.ts";
import { NODES, SERVICES } from "../../kube/resources.ts";
import type { WorkQueue } from "../../kube/work_queue.ts";
import { type ChangeBudget, throttledMessage } from "./change_budget.ts";
import { eligibleNode, EXCLUDE_LABEL, sameLabels } from "./nodes.ts";
import type { ServiceBook } from "./book.ts";
import { hasFinalizer } from "./writes.ts";
import type { TlsSecretWatch } from "./secrets.ts";

/** What the triggers work with. */
export interface TriggerParts {
  informers: InformerFactory;
  recorder: EventRecorder;
  budget: ChangeBudget;
  /** The Service queue. */
  queue: WorkQueue;
  /** The room's shared state: which Services are served, the node sets, the provider's state keys. */
  book: ServiceBook;
  /** Asks for a node sync, after the pace the node set's size sets. */
  nodeSync(): void;
  /** Whether a balancer may select Nodes by their labels (the provider has node targets). */
  labelsSelect: boolean;
}

/** Queues Services on their changes, admitted from their namespace's budget. */
export function watchServices(parts: TriggerParts): void {
  const { informers, queue } = parts;
  // The informer's first list is the CCM's own start, not a tenant's change: no budget.
  const changed = (svc: Service) => {
    if (!parts.book.wants(svc) && !hasFinalizer(svc)) return;
    const key = objectKey(svc);
    if (!informers.for(SERVICES).hasSynced()) return queue.add(key);
    const admitted = parts.budget.admit(svc.metadata?.namespace ?? "default", key);
    if (!admitted) return;
    if (admitted.delayMs === 0) return queue.add(key);
    queue.addAfter(key, admitted.delayMs);
    if (admitted.warn) {
      parts.recorder.event(
        SERVICES,
        svc,
        "Warning",
        "ServiceChangesThrottled",
        throttledMessage(admitted.delayMs),
      );
    }
  };
  informers.for(SERVICES).addHandlers({
    onAdd: changed,
    onUpdate: (old, svc) => {
      if (old !== svc && relevant(old, parts.book.stateKeys) !== relevant(svc, parts.book.stateKeys)) {
        changed(svc);
      }
    },
    onDelete: (svc) => parts.book.nodeSets.forget(objectKey(svc)),
  });
}

/** A Secret that appears, changes or goes: the Services naming it are synced with its content. */
export function watchSecrets(parts: TriggerParts, secrets: TlsSecretWatch): void {
  secrets.onChange((namespace, name) => {
    for (const svc of parts.informers.for(SERVICES).list()) {
      if (parts.book.wants(svc) && secrets.names(svc, namespace, name)) parts.queue.add(objectKey(svc));
    }
  });
}

/** Asks for node syncs on the Node changes that can alter a balancer's targets. */
export function watchNodes(parts: TriggerParts): void {
  parts.informers.for(NODES).addHandlers({
    onAdd: parts.nodeSync,
    onDelete: parts.nodeSync,
    onUpdate: (old, node) => {
      // Any real change may alter what providers read (addresses, say); resyncs (old === node) do not.
      if (old !== node) parts.book.nodeSets.nodesChanged();
      if (
        eligibleNode(old) !== eligibleNode(node) || old.spec?.providerID !== node.spec?.providerID ||
        old.metadata?.labels?.[EXCLUDE_LABEL] !== node.metadata?.labels?.[EXCLUDE_LABEL]
      ) parts.nodeSync();
      // A label may move the Node in or out of a balancer's node selector: only balancers whose
      // targets change are updated, so this costs no cloud call otherwise.
      else if (parts.labelsSelect && !sameLabels(old, node)) parts.nodeSync();
    },
  });
}

/** What makes a Service worth a sync: spec, annotations, deletion, identity. */
function relevant(svc: Service, stateKeys: Set<string>): string {
  const annotations = Object.entries(svc.metadata?.annotations ?? {}).filter(([k]) => !stateKeys.has(k));
  return JSON.stringify([
    svc.spec,
    annotations,
    svc.metadata?.deletionTimestamp,
    svc.metadata?.uid,
  ]);
}
