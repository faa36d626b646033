/**
 * The cloud node lifecycle controller: every `--node-monitor-period`, a Node whose Ready condition
 * is not True is deleted when its server is gone, or tainted `node.cloudprovider.kubernetes.io/shutdown`
 * when the server is off; a Ready Node loses that taint. A cloud error never deletes a Node.
 *
 * Like upstream, this includes Nodes that were never initialized: a NotReady Node that no server
 * matches (by provider ID, name or node IP) is deleted. A live kubelet keeps its Node Ready, so a
 * misnamed but healthy Node is never touched.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { Controller, ControllerContext } from "./manager.ts";
import { hasTaint, isReady, SHUTDOWN_TAINT, withoutTaint } from "./node_metadata.ts";
import { NODES } from "../kube/resources.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { Instances } from "../providers/provider.ts";
import { abortableSleep } from "../lib/sleep.ts";
import { logger } from "../lib/log.ts";
import { withPriority } from "../lib/priority.ts";

/** The component name on events. */
export const LIFECYCLE_COMPONENT = "cloud-node-lifecycle-controller";

/** Builds the controller, or says why it cannot run. */
export function nodeLifecycleController(ctx: ControllerContext): Controller | { disabled: string } {
  const instances = ctx.provider.instances;
  if (!instances) return { disabled: `provider ${ctx.provider.name} has no instances` };
  ctx.informers.for(NODES);
  return new NodeLifecycleController(ctx, instances);
}

class NodeLifecycleController implements Controller {
  readonly name = LIFECYCLE_COMPONENT;
  readonly #ctx: ControllerContext;
  readonly #instances: Instances;
  readonly #recorder;
  readonly #log = logger("node-lifecycle");

  constructor(ctx: ControllerContext, instances: Instances) {
    this.#ctx = ctx;
    this.#instances = instances;
    this.#recorder = ctx.recorder(LIFECYCLE_COMPONENT);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const started = Date.now();
      await withPriority("node", () => this.monitor());
      await abortableSleep(Math.max(0, this.#ctx.flags.nodeMonitorPeriod - (Date.now() - started)), signal)
        .catch(() => {});
    }
  }

  /** One pass over every Node; the checks run together so their lookups share one server list. */
  async monitor(): Promise<void> {
    const nodes = this.#ctx.informers.for(NODES).list();
    await Promise.all(nodes.map((node) => this.#check(node)));
  }

  async #check(node: Node): Promise<void> {
    const name = node.metadata!.name!;
    if (node.metadata?.deletionTimestamp) return;
    if (isReady(node)) {
      if (hasTaint(node, SHUTDOWN_TAINT)) {
        await this.#setTaints(node, withoutTaint(node, SHUTDOWN_TAINT), "removed the shutdown taint");
      }
      return;
    }
    let exists: boolean;
    try {
      exists = await this.#instances.instanceExists(node);
    } catch (err) {
      this.#log.warning("cannot tell whether node {name} still exists: {error}", {
        name,
        error: (err as Error).message,
      });
      return;
    }
    if (!exists) {
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
      return;
    }
    let shutdown: boolean;
    try {
      shutdown = await this.#instances.instanceShutdown(node);
    } catch (err) {
      this.#log.warning("cannot tell whether node {name} is shut down: {error}", {
        name,
        error: (err as Error).message,
      });
      return;
    }
    if (shutdown && !hasTaint(node, SHUTDOWN_TAINT)) {
      await this.#setTaints(node, [...(node.spec?.taints ?? []), {
        key: SHUTDOWN_TAINT,
        effect: "NoSchedule",
      }], "added the shutdown taint");
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
