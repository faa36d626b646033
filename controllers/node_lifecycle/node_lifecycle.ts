/**
 * The cloud node lifecycle controller: every `--node-monitor-period`, a Node whose Ready condition
 * is not True is deleted when its server is gone, or tainted `node.cloudprovider.kubernetes.io/shutdown`
 * when the server is off; a Ready Node loses that taint. A cloud error never deletes a Node.
 *
 * Like upstream, this includes Nodes that were never initialized: a NotReady Node that no server
 * matches (by provider ID, name or node IP) is deleted. A live kubelet keeps its Node Ready, so a
 * misnamed but healthy Node is never touched. Unlike upstream, a cloud that suddenly looks empty
 * deletes nothing (see `monitor`).
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { type Controller, type ControllerContext, partMissing } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import { hasTaint, isReady, managedNode, SHUTDOWN_TAINT, withoutTaint } from "../node_metadata.ts";
import { NODES } from "../../kube/resources.ts";
import { KubeApiError } from "../../kube/errors.ts";
import type { Instances } from "../../providers/provider.ts";
import { sleepOn } from "../../lib/clock.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";
import { CONFIRM_DELETION } from "../../kube/well_known.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type LifecycleFlags = Pick<Flags, "nodeDeletionMaxPercent" | "nodeMonitorPeriod">;

/** The component name on events. */
export const LIFECYCLE_COMPONENT = "cloud-node-lifecycle-controller";

/** How many Ready Nodes are asked whether the cloud still shows them. */
const CORROBORATING_NODES = 3;
/** How long a cloud that hid the healthy Nodes' servers stays disbelieved before it is asked again. */
const CORROBORATION_RETRY_MS = 60_000;
/** How soon a cloud that could not be asked (errors, an empty budget) is asked again. */
const CORROBORATION_ERROR_RETRY_MS = 10_000;

/** Builds the controller, or says why it cannot run. */
export function nodeLifecycleController(
  ctx: ControllerContext<LifecycleFlags>,
): Controller | { disabled: string } {
  const instances = ctx.provider.instances;
  if (!instances) {
    return partMissing(ctx.provider, "instances", "has no instances");
  }
  ctx.informers.for(NODES);
  return new NodeLifecycleController(ctx, instances);
}

class NodeLifecycleController implements Controller {
  readonly name = LIFECYCLE_COMPONENT;
  readonly #ctx: ControllerContext<LifecycleFlags>;
  readonly #instances: Instances;
  readonly #recorder;
  readonly #log = logger("node-lifecycle");
  readonly #heldGauge;
  /** The Nodes (UIDs) whose deletion is held, as last reported. */
  #heldKey = "";
  /** The same Nodes, by name. */
  #held = new Set<string>();
  /** When the cloud last failed to show the healthy Nodes' servers (see `#cloudShowsHealthyNodes`). */
  #disbelievedAt: number | undefined;
  /** Monitor passes started, counting from 1: an answer stands within its own pass only. */
  #pass = 0;
  /** The pass in which the cloud last showed them (the pass's second question reuses the answer). */
  #believedInPass: number | undefined;

  constructor(ctx: ControllerContext<LifecycleFlags>, instances: Instances) {
    this.#ctx = ctx;
    this.#instances = instances;
    this.#recorder = ctx.recorder(LIFECYCLE_COMPONENT);
    this.#heldGauge = ctx.metrics.gauge(
      "node_lifecycle_deletions_held",
      "Nodes whose server is not found but whose deletion is held because too many vanished at once.",
    );
    this.#heldGauge.set({}, 0);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const clock = this.#ctx.clock;
      const started = clock.now();
      await withPriority("node", () => this.monitor(signal));
      await sleepOn(clock, Math.max(0, this.#ctx.flags.nodeMonitorPeriod - (clock.now() - started)), signal)
        .catch(() => {});
    }
  }

  /**
   * One pass over every Node; the checks run together so their lookups share one server list. The
   * deletions are decided together: before any Node is deleted, the cloud must still show the servers
   * of healthy Nodes; when it does not, it is not believed (a token for another project, an API
   * incident, an empty answer) and no Node is deleted unless an operator confirms it (security probe
   * O2: a minority of NotReady Nodes was deleted while the cloud showed no server at all). Without a
   * Ready Node to ask, a vanished minority is believed, and more than `--node-deletion-max-percent`
   * of the Nodes (and more than one) is not.
   */
  async monitor(signal?: AbortSignal): Promise<void> {
    const pass = ++this.#pass;
    // Nodes that are not the cloud's (labelled so) are never checked, counted or deleted.
    const nodes = this.#ctx.informers.for(NODES).list().filter(managedNode);
    // Nodes already held are not read again while the cloud is still not believed: reading each
    // one's server on every pass is a request per Node per period for as long as the hold lasts (20
    // held Nodes at the default 5 s: four times the project's hourly budget). One of them, the first
    // by name, is read on each pass instead: once its server is back (the cloud answers plausibly
    // again, and with no Ready Node to ask that is how it shows) or the cloud is believed again, all
    // are read afresh.
    const stillHeld = nodes.filter((n) =>
      this.#held.has(n.metadata?.name ?? "") && !isReady(n) && !n.metadata?.deletionTimestamp &&
      n.metadata?.annotations?.[CONFIRM_DELETION] !== "true"
    ).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
    const max = this.#ctx.flags.nodeDeletionMaxPercent;
    const manyHeld = max < 100 && stillHeld.length > 1 && stillHeld.length * 100 > max * nodes.length;
    const skip = stillHeld.length > 0 &&
      !(await this.#cloudShowsHealthyNodes(nodes, manyHeld, pass, signal)) &&
      !(await this.#instances.instanceExists(stillHeld[0], signal).catch(() => false));
    const verdicts = await Promise.all(
      nodes.map(async (node) => ({
        node,
        gone: skip && stillHeld.includes(node) ? true : await this.#check(node, signal),
      })),
    );
    // A pass cut short (SIGTERM, a lost lease) decides nothing.
    if (signal?.aborted) return;
    const gone = verdicts.filter((v) => v.gone).map((v) => v.node);
    const many = max < 100 && gone.length > 1 && gone.length * 100 > max * nodes.length;
    const implausible = gone.length > 0 && !(await this.#cloudShowsHealthyNodes(nodes, many, pass, signal));
    if (signal?.aborted) return;
    const held = implausible
      ? gone.filter((n) => n.metadata?.annotations?.[CONFIRM_DELETION] !== "true")
      : [];
    this.#reportHeld(held, gone.length, nodes.length);
    await Promise.all(gone.filter((n) => !held.includes(n)).map((n) => this.#delete(n)));
  }

  /**
   * Whether the cloud still shows the servers of healthy Nodes. Many NotReady Nodes gone at once is
   * believed when it is: Nodes that left one by one while this CCM was down or held back look like a
   * mass vanishing, but a wrong token, another project or an empty answer hides the healthy Nodes'
   * servers too. A few Ready Nodes are asked (one shared server list), at most once a minute while
   * the answer is no; with no Ready Node there is nothing to corroborate: a few vanished Nodes are
   * believed, `many` are not.
   */
  async #cloudShowsHealthyNodes(
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

  /** Reports a change of the held set: event per Node, log line, metric and `/readyz`. */
  #reportHeld(held: Node[], gone: number, total: number): void {
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

  /** Taints and untaints; returns true when the Node's server is confirmed gone (deletion decided later). */
  async #check(node: Node, signal?: AbortSignal): Promise<boolean> {
    const name = node.metadata!.name!;
    if (node.metadata?.deletionTimestamp) return false;
    if (isReady(node)) {
      if (hasTaint(node, SHUTDOWN_TAINT)) {
        await this.#setTaints(node, withoutTaint(node, SHUTDOWN_TAINT), "removed the shutdown taint");
      }
      return false;
    }
    let exists: boolean;
    try {
      exists = await this.#instances.instanceExists(node, signal);
    } catch (err) {
      if (signal?.aborted) return false;
      this.#log.warning("cannot tell whether node {name} still exists: {error}", {
        name,
        error: (err as Error).message,
      });
      return false;
    }
    if (!exists) return true;
    let shutdown: boolean;
    try {
      shutdown = await this.#instances.instanceShutdown(node, signal);
    } catch (err) {
      if (signal?.aborted) return false;
      this.#log.warning("cannot tell whether node {name} is shut down: {error}", {
        name,
        error: (err as Error).message,
      });
      return false;
    }
    if (shutdown && !hasTaint(node, SHUTDOWN_TAINT)) {
      await this.#setTaints(node, [...(node.spec?.taints ?? []), {
        key: SHUTDOWN_TAINT,
        effect: "NoSchedule",
      }], "added the shutdown taint");
    }
    return false;
  }

  async #delete(node: Node): Promise<void> {
    const name = node.metadata!.name!;
    this.#recorder.event(
      NODES,
      node,
      "Normal",
      "DeletingNode",
      `Deleting node ${name} because it does not exist in the cloud provider`,
    );
    try {
      await this.#ctx.client.delete(NODES, name, { preconditions: { uid: node.metadata?.uid } });
      this.#log.info("deleted node {name}: its server is gone", { name });
    } catch (err) {
      if (err instanceof KubeApiError && err.isNotFound) return;
      this.#recorder.event(
        NODES,
        node,
        "Warning",
        "DeletingNodeFailed",
        `Error deleting node ${name}: ${(err as Error).message}`,
      );
    }
  }

  async #setTaints(node: Node, taints: NonNullable<Node["spec"]>["taints"], what: string): Promise<void> {
    const name = node.metadata!.name!;
    try {
      await this.#ctx.client.patch(NODES, name, "merge", {
        metadata: { resourceVersion: node.metadata?.resourceVersion },
        spec: { taints },
      });
      this.#log.info("{what} on node {name}", { what, name });
    } catch (err) {
      // A conflict means the Node changed; the next pass sees the new version.
      if (!(err instanceof KubeApiError && (err.isConflict || err.isNotFound))) {
        this.#log.warning("cannot update taints of node {name}: {error}", {
          name,
          error: (err as Error).message,
        });
      }
    }
  }
}

export { CONFIRM_DELETION };
