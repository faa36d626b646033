/**
 * Taints a provider keeps in step on Nodes (`InstanceMetadata.syncedTaints`, e.g. from the server's
 * labels): set with the initialization, updated and removed at every address refresh. The keys
 * written are remembered in an annotation, so a taint the CCM did not write is never changed or
 * removed.
 *
 * As for synced labels, the annotation is the kubelet's to write too: it is trusted only for keys
 * under the provider's prefix, and not at all when the provider syncs no taints, so a forged record
 * cannot make the CCM remove another taint (the uninitialized or shutdown taint, say).
 *
 * @module
 */
import type { Node, Taint } from "kubernetes-types/core/v1.d.ts";
import { SYNCED_TAINTS_ANNOTATION } from "../../kube/well_known.ts";

/** The Node's taints after the sync, and the annotation change; `undefined` when in step. */
export interface SyncedTaintsPatch {
  /** The whole list to write (a taint list is replaced as one). */
  taints: Taint[];
  annotations: Record<string, string | null>;
  /** Wanted keys left alone because someone else wrote a taint with them. */
  conflicts: string[];
}

/**
 * What the Node's taints become so it carries `synced.taints` (and no longer what the CCM wrote
 * before), starting from `base` (default: the Node's taints); `undefined` when in step or when the
 * provider syncs no taints.
 */
export function syncedTaintsPatch(
  node: Node,
  synced: { prefix: string; taints: Taint[] } | undefined,
  base: Taint[] = node.spec?.taints ?? [],
): SyncedTaintsPatch | undefined {
  if (!synced || !synced.prefix) return undefined;
  const { prefix } = synced;
  const wanted = synced.taints.filter((t) => t.key.startsWith(prefix));
  const annotation = node.metadata?.annotations?.[SYNCED_TAINTS_ANNOTATION];
  const written = new Set((annotation ? annotation.split(",") : []).filter((k) => k.startsWith(prefix)));
  const conflicts = wanted.filter((t) => !written.has(t.key) && base.some((b) => b.key === t.key))
    .map((t) => t.key);
  const ours = wanted.filter((t) => !conflicts.includes(t.key));
  const kept = base.filter((t) => !written.has(t.key) && !ours.some((o) => o.key === t.key));
  const taints = [
    ...kept,
    ...ours.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect })),
  ];
  const list = ours.map((t) => t.key).sort().join(",");
  const annotations: Record<string, string | null> = {};
  if ((annotation ?? "") !== list) annotations[SYNCED_TAINTS_ANNOTATION] = list || null;
  const same = sameTaints(node, taints);
  if (same && Object.keys(annotations).length === 0) {
    return conflicts.length ? { taints, annotations: {}, conflicts } : undefined;
  }
  return { taints, annotations, conflicts };
}

/** Whether the Node carries exactly `taints` (key, value and effect; order aside). */
export function sameTaints(node: Node, taints: Taint[]): boolean {
  const have = node.spec?.taints ?? [];
  return have.length === taints.length &&
    taints.every((t) =>
      have.some((h) => h.key === t.key && (h.value ?? "") === (t.value ?? "") && h.effect === t.effect)
    );
}

/**
 * `taints` with the provider's startup taints added, once, at initialization: a key already there (the
 * Node's own, or a synced taint's) is left as it is, and nothing puts them back after they are lifted.
 */
export function withStartupTaints(taints: Taint[], startup: Taint[] | undefined): Taint[] {
  const added = (startup ?? []).filter((t) => !taints.some((have) => have.key === t.key));
  return added.length ? [...taints, ...added] : taints;
}
