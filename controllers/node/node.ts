/**
 * The cloud node controller: initializes Nodes that carry the uninitialized taint (provider ID,
 * labels, addresses, then the taint removed) and refreshes the addresses of initialized Nodes
 * every `--node-status-update-frequency` from one server list.
 *
 * Order of writes: addresses (status) first, then provider ID, labels and taint removal in one
 * conditional patch, so a Node never becomes schedulable without its cloud addresses.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { type Controller, type ControllerContext, partMissing } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import {
  hasTaint,
  initLabels,
  labelRepairs,
  managedNode,
  nodeAddresses,
  sameAddresses,
  UNINITIALIZED_TAINT,
  withoutTaint,
} from "../node_metadata.ts";
import { NODES } from "../../kube/resources.ts";
import { KubeApiError } from "../../kube/errors.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import type { Instances } from "../../providers/provider.ts";
import { syncedLabelsPatch } from "./synced_labels.ts";
import { sameTaints, syncedTaintsPatch, withStartupTaints } from "./synced_taints.ts";
import { NodeWarnings } from "./node_warnings.ts";
import { NodeIndex } from "./node_index.ts";
import { warningsOf } from "../../providers/errors.ts";
import { sleepOn } from "../../lib/clock.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";
import { reconcilePolicy, rootCause, TerminalError } from "../../kube/reconcile.ts";
import { PROVIDED_NODE_IP } from "../../kube/well_known.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type NodeFlags = Pick<Flags, "nodeStatusUpdateFrequency" | "concurrentNodeSyncs">;

/** The component name on events. */
export const NODE_COMPONENT = "cloud-node-controller";

/** Builds the controller, or says why it cannot run. */
export function nodeController(ctx: ControllerContext<NodeFlags>): Controller | { disabled: string } {
  const instances = ctx.provider.instances;
  if (!instances) {
    return partMissing(ctx.provider, "instances", "has no instances");
  }
  return new NodeController(ctx, instances);
}

class NodeController implements Controller {
  readonly name = NODE_COMPONENT;
  readonly #ctx: ControllerContext<NodeFlags>;
  readonly #instances: Instances;
  readonly #queue: WorkQueue;
  readonly #recorder;
  readonly #log = logger("node");
  readonly #initDelay;
  /** Every Node by provider ID and address, for the duplicate checks at initialization. */
  readonly #index = new NodeIndex();
  /** The Warnings this controller says on Nodes (node_warnings.ts). */
  readonly #warnings: NodeWarnings;

  constructor(ctx: ControllerContext<NodeFlags>, instances: Instances) {
    this.#ctx = ctx;
    this.#instances = instances;
    this.#queue = new WorkQueue("cloud-node", {
      clock: ctx.clock,
      baseDelayMs: 500,
      maxDelayMs: 300_000,
      metrics: ctx.metrics,
    });
    this.#recorder = ctx.recorder(NODE_COMPONENT);
    this.#warnings = new NodeWarnings(this.#recorder, ctx.informers.for(NODES), this.#index);
    this.#initDelay = ctx.metrics.histogram(
      "node_controller_initial_node_sync_delay_seconds",
      "Time from Node creation to its initialization by the cloud node controller.",
      [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800],
    );
    const enqueue = (node: Node) => {
      if (hasTaint(node, UNINITIALIZED_TAINT) || Object.keys(labelRepairs(node)).length) {
        this.#queue.add(node.metadata!.name!);
      }
    };
    ctx.informers.for(NODES).addHandlers({
      onAdd: (node) => {
        this.#index.update(node);
        enqueue(node);
      },
      onUpdate: (_old, node) => {
        this.#index.update(node);
        enqueue(node);
      },
      onDelete: (node) => this.#index.remove(node),
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener("abort", () => this.#queue.shutDown(), { once: true });
    await Promise.all([
      runWorkers(
        this.#queue,
        (name, cancel) => withPriority("node", () => this.#sync(name, cancel)),
        {
          workers: this.#ctx.flags.concurrentNodeSyncs,
          policy: reconcilePolicy,
          signal,
          // Not ours (a Robot server without Robot support, a foreign provider ID): said once, then the
          // Node is left alone until it changes.
          onTerminal: (name, err) => {
            const node = this.#ctx.informers.for(NODES).get(name);
            if (node) this.#recorder.event(NODES, node, "Warning", "UnsupportedNode", (err as Error).message);
          },
        },
      ),
      withPriority("refresh", () => this.#refreshLoop(signal)),
    ]);
  }

  async #sync(name: string, signal: AbortSignal): Promise<void> {
    const node = this.#ctx.informers.for(NODES).get(name);
    // Not the cloud's (labelled so): never looked up; its taint is its own tooling's to lift.
    if (!node || !managedNode(node)) return;
    if (!hasTaint(node, UNINITIALIZED_TAINT)) {
      const repairs = labelRepairs(node);
      if (Object.keys(repairs).length) {
        await this.#ctx.client.patch(NODES, name, "merge", { metadata: { labels: repairs } });
      }
      return;
    }
    let meta;
    try {
      meta = await this.#instances.instanceMetadata(node, "initialize", signal);
    } catch (err) {
      // Cancelled, not failed: no event; a TerminalError is reported by the worker loop (onTerminal).
      if (signal.aborted || rootCause(err) instanceof TerminalError) throw err;
      this.#warnings.say(node, [...warningsOf(err)]);
      throw err;
    }
    this.#warnings.say(node, meta?.warnings ?? []);
    if (meta) this.#warnings.duplicates(node, meta.providerID);
    if (!meta) {
      const ips = node.metadata?.annotations?.[PROVIDED_NODE_IP];
      const message = node.spec?.providerID
        ? `no cloud server with provider ID ${node.spec.providerID}`
        : `no cloud server named "${name}"${ips ? ` and none with the node IP ${ips}` : ""}`;
      this.#recorder.event(
        NODES,
        node,
        "Warning",
        "InstanceNotFound",
        `${message}; the node stays uninitialized`,
      );
      throw new Error(message);
    }
    if (!meta.providerID && !node.spec?.providerID) {
      throw new Error("the provider returned an empty provider ID");
    }
    let addresses;
    try {
      addresses = nodeAddresses(node, meta.nodeAddresses);
    } catch (err) {
      this.#recorder.event(
        NODES,
        node,
        "Warning",
        "AddressMismatch",
        `${(err as Error).message}; the node stays uninitialized`,
      );
      throw err;
    }
    // The status write answers with the Node as it is now: the metadata patch builds on that
    // version, so it does not conflict with our own write (and still with anyone else's).
    let current = node;
    if (addresses && !sameAddresses(addresses, node.status?.addresses)) {
      current = await this.#ctx.client.patch(NODES, name, "merge", { status: { addresses } }, {
        subresource: "status",
      });
      this.#warnings.shared(node, addresses);
    }
    const synced = syncedLabelsPatch(current, meta.syncedLabels);
    this.#warnings.conflicts(node, synced?.conflicts);
    // The provider's taints land in the same write that lifts the uninitialized taint: no pod is
    // scheduled onto the Node before they are there.
    const base = withoutTaint(current, UNINITIALIZED_TAINT);
    const tainted = syncedTaintsPatch(current, meta.syncedTaints, base);
    this.#warnings.conflicts(node, tainted?.conflicts, "taint");
    const annotations = { ...synced?.annotations, ...tainted?.annotations };
    try {
      await this.#ctx.client.patch(NODES, name, "merge", {
        metadata: {
          labels: { ...initLabels(current, meta), ...synced?.labels },
          ...(Object.keys(annotations).length ? { annotations } : {}),
          resourceVersion: current.metadata?.resourceVersion,
        },
        spec: {
          providerID: current.spec?.providerID || meta.providerID,
          taints: withStartupTaints(tainted?.taints ?? base, meta.startupTaints),
        },
      });
    } catch (err) {
      // The Node changed since we read it: the informer brings the new version and we sync again.
      if (err instanceof KubeApiError && err.isNotFound) return;
      throw err;
    }
    this.#warnings.written(name, current.spec?.providerID || meta.providerID);
    const created = Date.parse(node.metadata?.creationTimestamp ?? "");
    if (created) this.#initDelay.observe({}, (this.#ctx.clock.now() - created) / 1000);
    this.#recorder.event(NODES, node, "Normal", "Synced", "Node synced successfully");
    this.#log.info("initialized node {name} as {providerID}", {
      name,
      providerID: node.spec?.providerID || meta.providerID,
    });
  }

  /** Every period: fresh addresses for all initialized Nodes, resolved together (one server list). */
  async #refreshLoop(signal: AbortSignal): Promise<void> {
    const period = this.#ctx.flags.nodeStatusUpdateFrequency;
    while (!signal.aborted) {
      await sleepOn(this.#ctx.clock, period, signal).catch(() => {});
      if (signal.aborted) return;
      const nodes = this.#ctx.informers.for(NODES).list().filter((n) =>
        !hasTaint(n, UNINITIALIZED_TAINT) && managedNode(n)
      );
      const results = await Promise.allSettled(
        nodes.map((n) => this.#instances.instanceMetadata(n, "refresh", signal)),
      );
      for (const [i, result] of results.entries()) {
        const node = nodes[i];
        this.#warnings.say(
          node,
          result.status === "rejected" ? [...warningsOf(result.reason)] : result.value?.warnings ?? [],
        );
        if (result.status === "rejected" || !result.value) continue;
        try {
          const addresses = nodeAddresses(node, result.value.nodeAddresses);
          if (addresses && !sameAddresses(addresses, node.status?.addresses)) {
            await this.#ctx.client.patch(NODES, node.metadata!.name!, "merge", { status: { addresses } }, {
              subresource: "status",
            });
            this.#log.info("updated addresses of node {name}", { name: node.metadata!.name });
            this.#warnings.shared(node, addresses);
          }
          const synced = syncedLabelsPatch(node, result.value.syncedLabels);
          this.#warnings.conflicts(node, synced?.conflicts);
          if (synced && (Object.keys(synced.labels).length || Object.keys(synced.annotations).length)) {
            await this.#ctx.client.patch(NODES, node.metadata!.name!, "merge", {
              metadata: { labels: synced.labels, annotations: synced.annotations },
            });
            this.#log.info("updated synced labels of node {name}", { name: node.metadata!.name });
          }
          const tainted = syncedTaintsPatch(node, result.value.syncedTaints);
          this.#warnings.conflicts(node, tainted?.conflicts, "taint");
          if (tainted && (Object.keys(tainted.annotations).length || !sameTaints(node, tainted.taints))) {
            // The whole list is written: the Node's version guards it against a taint added meanwhile.
            await this.#ctx.client.patch(NODES, node.metadata!.name!, "merge", {
              metadata: { annotations: tainted.annotations, resourceVersion: node.metadata?.resourceVersion },
              spec: { taints: tainted.taints },
            });
            this.#log.info("updated synced taints of node {name}", { name: node.metadata!.name });
          }
        } catch (err) {
          this.#log.warning("cannot refresh addresses of node {name}: {error}", {
            name: node.metadata!.name,
            error: (err as Error).message,
          });
        }
      }
    }
  }
}
