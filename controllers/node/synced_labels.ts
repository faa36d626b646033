/**
 * Labels a provider keeps in step on initialized Nodes (`InstanceMetadata.syncedLabels`, e.g. the
 * server's own labels): written, updated and removed at every address refresh. The keys written are
 * remembered in an annotation, so a label the CCM did not write is never changed or removed.
 *
 * The annotation is on the Node, where its kubelet may write it: it is trusted only for keys under
 * the provider's prefix (labels that belong to the sync), and not at all when the provider syncs
 * nothing, so a forged record cannot make the CCM remove `node-role` or `node-restriction` labels.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { SYNCED_LABELS_ANNOTATION } from "../../kube/well_known.ts";

/** A merge patch for `metadata`, or `undefined` when the Node is in step. */
export interface SyncedLabelsPatch {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
  /** Wanted keys left alone because someone else wrote them. */
  conflicts: string[];
}

/**
 * What to change so the Node carries `synced.labels` (and no longer what the CCM wrote before);
 * `undefined` when in step or when the provider syncs nothing.
 */
export function syncedLabelsPatch(
  node: Node,
  synced: { prefix: string; labels: Record<string, string> } | undefined,
): SyncedLabelsPatch | undefined {
  if (!synced || !synced.prefix) return undefined;
  const { prefix } = synced;
  const wanted = Object.fromEntries(Object.entries(synced.labels).filter(([k]) => k.startsWith(prefix)));
  const labels = node.metadata?.labels ?? {};
  const annotation = node.metadata?.annotations?.[SYNCED_LABELS_ANNOTATION];
  const written = new Set((annotation ? annotation.split(",") : []).filter((k) => k.startsWith(prefix)));
  const patch: Record<string, string | null> = {};
  const conflicts: string[] = [];
  const ours = new Set<string>();
  for (const [key, value] of Object.entries(wanted)) {
    if (key in labels && !written.has(key)) {
      if (labels[key] !== value) conflicts.push(key);
      continue;
    }
    ours.add(key);
    if (labels[key] !== value) patch[key] = value;
  }
  for (const key of written) {
    if (!ours.has(key) && key in labels) patch[key] = null;
  }
  const list = [...ours].sort().join(",");
  const annotations: Record<string, string | null> = {};
  if ((annotation ?? "") !== list) annotations[SYNCED_LABELS_ANNOTATION] = list || null;
  if (Object.keys(patch).length === 0 && Object.keys(annotations).length === 0) {
    return conflicts.length ? { labels: {}, annotations: {}, conflicts } : undefined;
  }
  return { labels: patch, annotations, conflicts };
}

export { SYNCED_LABELS_ANNOTATION };
