/**
 * One writer cannot spend the project's budget through its Node (security probe P4): a kubelet may
 * set `node.kubernetes.io/*` labels on its own Node (NodeRestriction allows it), and each flip of
 * `node.kubernetes.io/exclude-from-external-load-balancers` — or of a label a balancer's
 * `node-selector` reads — is a cloud write per balancer. So the labels (and the autoscaler's
 * taint) the load-balancer
 * controller reads are taken from a Node at most `capacity` times, then once per `refillMs` (a token
 * bucket per Node): past that, the controller keeps seeing the Node as it last took it until a token
 * is free, and the Node gets a Warning saying so. A Node that stops changing is taken as it is at the
 * next token. Deletion is never held (it happens once).
 *
 * Worst case per Node: `capacity` changes in a burst, then one per `refillMs` (defaults: 4, then one
 * per 15 minutes: at most 8 changes in the first hour and 4 an hour after), each costing one server
 * label write for the label-selector balancers plus one target action per node-selector balancer.
 *
 * A Node deleted and registered again is the same writer (its name is its kubelet's identity): its
 * bucket is kept while it is away (for as long as an empty one takes to refill), and coming back is a change like
 * any other; without a token it is kept out of the balancers (seen with the exclusion label) until one
 * comes (security review Q14: re-registering reset the bucket, 240 changes an hour instead of 7).
 *
 * @module
 */
import type { Node, Taint } from "kubernetes-types/core/v1.d.ts";
import { EXCLUDE_FROM_LB_LABEL, MANAGED_LABEL } from "../../kube/well_known.ts";

/** The labels a Node's eligibility as a target reads (every label counts where a node-selector reads them). */
const ELIGIBILITY_LABELS = [EXCLUDE_FROM_LB_LABEL, MANAGED_LABEL];
import { refilled } from "../../lib/token_bucket.ts";

/** The cluster autoscaler's taint: the one taint the load-balancer controller reads. */
export const AUTOSCALER_TAINT = "ToBeDeletedByClusterAutoscaler";

/** The default burst of changes taken from one Node. */
export const NODE_CHANGE_BURST = 4;
/** The default time after which one more change is taken from a Node. */
export const NODE_CHANGE_REFILL_MS = 15 * 60_000;

interface Taken {
  /** The labels and the autoscaler's taint as last taken. */
  labels: Record<string, string>;
  taints: Taint[];
  key: string;
  tokens: number;
  /** When `tokens` was last brought up to date. */
  at: number;
  /** When a Warning last said the Node is held (once per refill period, however it flaps). */
  warnedAt: number;
}

/** A Node the guard started holding, and when it takes the Node's state again at the earliest. */
export interface HeldNode {
  node: Node;
  releaseInMs: number;
}

/** See the module doc. */
export class NodeChangeGuard {
  readonly #taken = new Map<string, Taken>();
  /** Nodes gone from the view, with their buckets and when they left, for a full refill's time. */
  readonly #departed = new Map<string, { taken: Taken; since: number }>();
  readonly #withLabels = new WeakMap<Node, string>();
  readonly #eligibilityOnly = new WeakMap<Node, string>();

  constructor(
    readonly capacity = NODE_CHANGE_BURST,
    readonly refillMs = NODE_CHANGE_REFILL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The Nodes as the controller may see them now (a held Node with the labels and taints last
   * taken), the Nodes held from this look on, and when the next held Node can be taken again.
   * `labelsMatter`: whether some balancer selects Nodes by their labels (a node-selector).
   */
  view(nodes: Node[], labelsMatter = true): { nodes: Node[]; held: HeldNode[]; nextReleaseMs?: number } {
    const now = this.now();
    const seen = new Set<string>();
    const held: HeldNode[] = [];
    let next: number | undefined;
    const out = nodes.map((node) => {
      const name = node.metadata?.name ?? "";
      seen.add(name);
      const labels = node.metadata?.labels ?? {};
      // Of the taints, only the one eligibility reads (others, such as not-ready, change legitimately).
      const taints = (node.spec?.taints ?? []).filter((t) => t.key === AUTOSCALER_TAINT);
      // Cached per Node object (the informer's objects are replaced, never changed): a look at an
      // unchanged cluster builds no key (a 500-Node burst looks hundreds of times).
      const keys = labelsMatter ? this.#withLabels : this.#eligibilityOnly;
      let key = keys.get(node);
      if (key === undefined) keys.set(node, key = stateKey(labels, taints, labelsMatter));
      let taken = this.#taken.get(name);
      const returning = !taken ? this.#departed.get(name)?.taken : undefined;
      if (returning) {
        // Back again: the same bucket, and coming back is a change (its key can never match).
        this.#departed.delete(name);
        this.#taken.set(name, taken = { ...returning, key: "" });
      }
      if (!taken) {
        this.#taken.set(name, { labels, taints, key, tokens: this.capacity, at: now, warnedAt: -Infinity });
        return node;
      }
      if (taken.key === key || node.metadata?.deletionTimestamp) {
        Object.assign(taken, { labels, taints, key });
        return node;
      }
      taken.tokens = refilled(taken.tokens, taken.at, now, this.capacity, this.refillMs);
      taken.at = now;
      if (taken.tokens >= 1) {
        Object.assign(taken, { labels, taints, key, tokens: taken.tokens - 1 });
        return node;
      }
      const releaseInMs = Math.ceil((1 - taken.tokens) * this.refillMs);
      next = next === undefined ? releaseInMs : Math.min(next, releaseInMs);
      if (now - taken.warnedAt >= this.refillMs) {
        held.push({ node, releaseInMs });
        taken.warnedAt = now;
      }
      // Held: as last taken. Where no node-selector reads labels, only the eligibility labels are held.
      // A Node held as it comes back is kept out until its token (it was out while it was away).
      const lastTaken = taken.key === "" ? { ...taken.labels, [EXCLUDE_FROM_LB_LABEL]: "" } : taken.labels;
      const heldLabels = labelsMatter ? lastTaken : withEligibility(labels, lastTaken);
      return {
        ...node,
        metadata: { ...node.metadata, labels: heldLabels },
        spec: {
          ...node.spec,
          taints: [...(node.spec?.taints ?? []).filter((t) => t.key !== AUTOSCALER_TAINT), ...taken.taints],
        },
      };
    });
    for (const [name, taken] of [...this.#taken]) {
      if (seen.has(name)) continue;
      this.#taken.delete(name);
      this.#departed.set(name, { taken, since: now });
    }
    // Away for as long as an empty bucket takes to refill, a Node comes back as new.
    for (const [name, { since }] of [...this.#departed]) {
      if (now - since >= this.capacity * this.refillMs) this.#departed.delete(name);
    }
    return { nodes: out, held, nextReleaseMs: next };
  }
}

/** The Warning on a Node whose changes are held from now on. */
export function heldMessage(
  releaseInMs: number,
  burst = NODE_CHANGE_BURST,
  refillMs = NODE_CHANGE_REFILL_MS,
): string {
  const minutes = refillMs / 60_000;
  return `the Node's labels changed more than ${burst} times within ${minutes} minutes (label ` +
    `${EXCLUDE_FROM_LB_LABEL} or ${MANAGED_LABEL}, or one a node-selector reads), each change costing cloud writes: load ` +
    `balancers keep it as it was last taken; its state is taken again in ${
      Math.ceil(releaseInMs / 1000)
    } s, ` +
    `then one change per ${minutes} minutes`;
}

/** `labels` with the eligibility labels as `taken` had them. */
function withEligibility(
  labels: Record<string, string>,
  taken: Record<string, string>,
): Record<string, string> {
  const out = { ...labels };
  for (const key of ELIGIBILITY_LABELS) {
    if (taken[key] === undefined) delete out[key];
    else out[key] = taken[key];
  }
  return out;
}

/**
 * What a change is counted on: the eligibility labels and the autoscaler's taint, and every label when a
 * balancer's node-selector reads labels (else a label change costs no cloud call and is not counted).
 */
function stateKey(labels: Record<string, string>, taints: Taint[], labelsMatter: boolean): string {
  const sortedLabels = labelsMatter
    ? Object.entries(labels).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    : ELIGIBILITY_LABELS.map((key) => labels[key] ?? null);
  const sortedTaints = taints.map((t) => `${t.key}=${t.value ?? ""}:${t.effect}`).sort();
  return JSON.stringify([sortedLabels, sortedTaints]);
}
