/**
 * The node lifecycle's deletion breaker: whether the cloud is believed when it says servers are
 * gone, and the report of the Node deletions held while it is not (security probe O2, P8).
 *
 * Many NotReady Nodes gone at once is believed only when the cloud still shows the servers of a
 * few Ready Nodes; with no Ready Node to ask, a few vanished Nodes are believed and more than
 * `--node-deletion-max-percent` of them are not. An answer stands within its own monitor pass only.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { ControllerContext } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import type { Instances } from "../../providers/provider.ts";
import { isReady } from "../node_metadata.ts";
import { NODES } from "../../kube/resources.ts";
import { CONFIRM_DELETION } from "../../kube/well_known.ts";
import { logger } from "../../lib/log.ts";
import type { EventRecorder } from "../../kube/events.ts";

/** The flags the breaker reads. */
export type BreakerFlags = Pick<Flags, "nodeDeletionMaxPercent">;

/** How many Ready Nodes are asked whether the cloud still shows them. */
const CORROBORATING_NODES = 3;
/** How long a cloud that hid the healthy Nodes' servers stays disbelieved before it is asked again. */
const CORROBORATION_RETRY_MS = 60_000;
/** How soon a cloud that could not be asked (errors, an empty budget) is asked again. */
const CORROBORATION_ERROR_RETRY_MS = 10_000;

/** See the module doc. */
export class DeletionBreaker {
  readonly #ctx: ControllerContext<BreakerFlags>;
  readonly #instances: Instances;
  readonly #log = logger("node-lifecycle");
  readonly #recorder: EventRecorder;
  readonly #heldGauge;
  /** The Nodes (UIDs) whose deletion is held, as last reported. */
  #heldKey = "";
  /** The same Nodes, by name. */
  #held = new Set<string>();
  /** When the cloud last failed to show the healthy Nodes' servers (see `cloudShowsHealthyNodes`). */
  #disbelievedAt: number | undefined;
  /** The pass in which the cloud last showed them (the pass's second question reuses the answer). */
  #believedInPass: number | undefined;

  constructor(
    ctx: ControllerContext<BreakerFlags>,
    instances: Instances,
    recorder: EventRecorder,
  ) {
    this.#ctx = ctx;
    this.#instances = instances;
    this.#recorder = recorder;
    this.#heldGauge = ctx.metrics.gauge(
      "node_lifecycle_deletions_held",
      "Nodes whose server is not found but whose deletion is held because too many vanished at once.",
    );
    this.#heldGauge.set({}, 0);
  }

  /** Whether the deletion of the Node named so is held, as last reported. */
  holds(name: string): boolean {
    return this.#held.has(name);
  }

  /**
   * Whether the cloud still shows the servers of healthy Nodes. Many NotReady Nodes gone at once is
   * believed when it is: Nodes that left one by one while this CCM was down or held back look like a
   * mass vanishing, but a wrong token, another project or an empty answer hides the healthy Nodes'
   * servers too. A few Ready Nodes are asked (one shared server list), at most once a minute while
   * the answer is no; with no Ready Node there is nothing to corroborate: a few vanished Nodes are
   * believed, `many` are not.
   */
  async cloudShowsHealthyNodes(
    nodes: Node[],
    many: boolean,
    pass: number,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const now = this.#ctx.clock.now();
    const healthy = nodes.filter((n) => !n.metadata?.deletionTimestamp && isReady(n) && n.spec?.providerID)
      .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!))
      .slice(0, CORROBORATING_NODES);
    // Nothing to ask: decided by the count alone, whatever an earlier answer was.
    if (healthy.length === 0) return !many;
    if (this.#disbelievedAt !== undefined && now - this.#disbelievedAt < CORROBORATION_RETRY_MS) return false;
    // An answer stands within its own pass only, so every pass that is about to delete asks afresh
    // (probe P8: a 30 s old answer let a minority of NotReady Nodes be deleted on a cloud that had
    // turned empty since; CI13: so did an answer less than one period old, from the pass before,
    // when that pass read slowly and this one quickly). Many gone at once is always asked afresh.
    if (!many && this.#believedInPass === pass) return true;
    let shown = true;
    let failed = false;
    for (const node of healthy) {
      try {
        if (!(await this.#instances.instanceExists(node, signal))) shown = false;
      } catch {
        // No answer is no corroboration: nothing is deleted, and the question is asked again soon
        // (a 5xx or a 429 under load is not a cloud hiding servers, worth a minute's hold).
        shown = false;
        failed = true;
      }
      if (!shown) break;
    }
    this.#disbelievedAt = shown
      ? undefined
      : failed
      ? now - CORROBORATION_RETRY_MS + CORROBORATION_ERROR_RETRY_MS
      : now;
    this.#believedInPass = shown ? pass : undefined;
    return shown;
  }

  /** Reports the held set (changes: event per Node, log line); metric and `/readyz`: event per Node, log line, metric and `/readyz`. */
  report(held: Node[], gone: number, total: number): void {
    this.#heldGauge.set({}, held.length);
    this.#held = new Set(held.map((n) => n.metadata?.name ?? ""));
    const key = held.map((n) => n.metadata?.uid).sort().join(",");
    if (key === this.#heldKey) return;
    this.#heldKey = key;
    if (held.length === 0) {
      this.#ctx.conditions?.set("node-deletion", undefined);
      this.#log.info("node deletions resume: the cloud answers plausibly again");
      return;
    }
    const why = `the servers of ${gone} of ${total} Nodes are not found and the cloud does not show a ` +
      "Ready Node's server either (or, with no Ready Node to ask, more than " +
      `${this.#ctx.flags.nodeDeletionMaxPercent}% vanished at once): a wrong token or project, or an API incident?`;
    this.#ctx.conditions?.set("node-deletion", `${held.length} Node deletion(s) held: ${why}`);
    this.#log.warning("holding {n} node deletion(s): {why}", { n: held.length, why });
    for (const node of held) {
      this.#recorder.event(
        NODES,
        node,
        "Warning",
        "NodeDeletionHeld",
        `Not deleting node ${node.metadata?.name}, whose server is not found: ${why} Annotate the Node ` +
          `${CONFIRM_DELETION}=true to delete it anyway`,
      );
    }
  }
}
