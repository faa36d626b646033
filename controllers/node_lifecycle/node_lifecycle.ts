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
import { DeletionBreaker } from "./deletion_breaker.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type LifecycleFlags = Pick<Flags, "nodeDeletionMaxPercent" | "nodeMonitorPeriod">;

/** The component name on events. */
export const LIFECYCLE_COMPONENT = "cloud-node-lifecycle-controller";

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
  /** Monitor passes started, counting from 1: an answer stands within its own pass only. */
  #pass = 0;
  readonly #breaker: DeletionBreaker;

  constructor(ctx: ControllerContext<LifecycleFlags>, instances: Instances) {
    this.#ctx = ctx;
    this.#instances = instances;
    this.#recorder = ctx.recorder(LIFECYCLE_COMPONENT);
    this.#breaker = new DeletionBreaker(ctx, instances, this.#recorder);
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
      this.#breaker.holds(n.metadata?.name ?? "") && !isReady(n) && !n.metadata?.deletionTimestamp &&
      n.metadata?.annotations?.[CONFIRM_DELETION] !== "true"
    ).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
    const max = this.#ctx.flags.nodeDeletionMaxPercent;
    const manyHeld = max < 100 && stillHeld.length > 1 && stillHeld.length * 100 > max * nodes.length;
    const skip = stillHeld.length > 0 &&
      !(await this.#breaker.cloudShowsHealthyNodes(nodes, manyHeld, pass, signal)) &&
      !(await this.#instances.instanceExists(stillHeld[0], signal).catch(() => false));
    const verdicts = await Promise.all(
      nodes.map(async (node) => ({
        node,
        gone: skip && stillHeld.includes(node) ? true : await this.#check(node, signal),
      })),
    );
    // A pass cut short (SIGTERM, a lost lease) decides nothing.
    if (signal?.aborted) return;
    await this.#askPresentAgain(verdicts, signal);
    if (signal?.aborted) return;
    const gone = verdicts.filter((v) => v.gone).map((v) => v.node);
    const many = max < 100 && gone.length > 1 && gone.length * 100 > max * nodes.length;
    const implausible = gone.length > 0 &&
      !(await this.#breaker.cloudShowsHealthyNodes(nodes, many, pass, signal));
    if (signal?.aborted) return;
    const held = implausible
      ? gone.filter((n) => n.metadata?.annotations?.[CONFIRM_DELETION] !== "true")
      : [];
    this.#breaker.report(held, gone.length, nodes.length);
    await Promise.all(gone.filter((n) => !held.includes(n)).map((n) => this.#delete(n)));
  }

  /**
   * When a pass found servers gone, the NotReady Nodes it found present are asked once more. One
   * pass's answers can rest on data of different ages (a snapshot a moment before it expired, a list
   * read during the pass): servers that vanished together would then show as a minority gone, which
   * is believed and deleted before the rest show (CI: 2 of 4 vanished servers read from a snapshot
   * taken just before). Asked after the gone ones were read, the present ones are answered from that
   * data or newer. Costs nothing while no server is gone.
   */
  async #askPresentAgain(verdicts: { node: Node; gone: boolean }[], signal?: AbortSignal): Promise<void> {
    if (!verdicts.some((v) => v.gone)) return;
    const present = verdicts.filter((v) =>
      !v.gone && !isReady(v.node) && !v.node.metadata?.deletionTimestamp
    );
    await Promise.all(present.map(async (v) => {
      // An error is no answer: the Node counts as present, as on the first question.
      v.gone = !(await this.#instances.instanceExists(v.node, signal).catch(() => true));
    }));
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
