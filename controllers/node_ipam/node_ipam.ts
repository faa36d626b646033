/**
 * The node IPAM controller (ours, off unless named in `--controllers`, and only with
 * `--allocate-node-cidrs=true`): each Node without pod CIDRs gets one per family of
 * `--cluster-cidr`, in its order. IPv4 (and IPv6 with `RangeAllocator`) comes from a pool of the
 * range's subnets, rebuilt from the Nodes at start; IPv6 with `CloudAllocator` is index 1 of the
 * Node's machine's /64 (a `/80` by default: index 0 holds the host's `::1`), which the machine's
 * record ({@link Instances.machineRecord}, found by provider ID) gives, so a Node waits for its
 * initialization.
 *
 * Pod CIDRs are written once (the apiserver refuses changes): a Node whose machine's /64 changed
 * keeps its range and gets a `PodCIDRStale` Warning. A Node registered with pod CIDRs of its own, or
 * whose kubelet sets them later, keeps them; they are taken out of the pool, one that is another
 * Node's is reported, and so is one that is not a subnet of the pool. When {@link OTHER_ALLOCATOR_NODES}
 * Nodes this allocator serves got theirs from another writer, another allocator runs
 * (kube-controller-manager's): two allocators can give one range to two Nodes, so this one stops, says
 * why in an event, the log and `/readyz`. One kubelet can set only its own Node's, so it cannot stop
 * the allocator for every Node (security review Q2). Nodes labelled not the cloud's are left alone
 * (their ranges are still taken out of the pool).
 *
 * Cost: no cloud call of its own. The machine record comes from the provider's server list, which
 * the node controller keeps fresh anyway; the periodic check of the /64s (every
 * `--node-status-update-frequency`) reads the same list.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { Controller, ControllerContext } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import type { Instances } from "../../providers/provider.ts";
import { managedNode, podCidrs } from "../node_metadata.ts";
import { type FamilyPlan, type IpamFlags, ipamPlan } from "./node_ipam_plan.ts";
import {
  OTHER_ALLOCATOR_NODES,
  otherAllocator,
  otherWriter,
  podCidrWriter,
  relevant,
} from "./node_ipam_checks.ts";
import { MachineRanges } from "./machine_ranges.ts";
import { PodCidrBook } from "./node_ipam_book.ts";
import { NODES } from "../../kube/resources.ts";
import { KubeApiError } from "../../kube/errors.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import type { Cidr } from "../../lib/cidr.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type NodeIpamFlags = Pick<Flags, "nodeStatusUpdateFrequency" | "allocateNodeCidrs" | keyof IpamFlags>;

/** The controller's name (`--controllers`) and the component on its events. */
export const NODE_IPAM = "node-ipam-controller";
/** Its name on `/readyz`. */
const CONDITION = "node-ipam";
/** Queue keys that ask who wrote a Node's pod CIDRs. */
const WRITER_KEY = "writer/";

/** Builds the controller, or says why it cannot run. */
export function nodeIpamController(ctx: ControllerContext<NodeIpamFlags>): Controller | { disabled: string } {
  if (!ctx.flags.allocateNodeCidrs) {
    return { disabled: "--allocate-node-cidrs=false (pod CIDRs are left to kube-controller-manager)" };
  }
  const plan = ipamPlan(ctx.flags);
  // main refuses these before anything starts; a harness that did not still gets the reason.
  if (plan.errors.length) return { disabled: plan.errors.join("; ") };
  const instances = ctx.provider.instances;
  if (plan.families.some((f) => f.source === "machine") && !instances?.machineRecord) {
    return {
      disabled: `provider ${ctx.provider.name} keeps no record of machines' IPv6 ranges ` +
        "(--cidr-allocator-type=RangeAllocator takes IPv6 from --cluster-cidr instead)",
    };
  }
  return new NodeIpam(ctx, plan.families, instances);
}

class NodeIpam implements Controller {
  readonly name = NODE_IPAM;
  readonly #ctx: ControllerContext<NodeIpamFlags>;
  readonly #families: FamilyPlan[];
  /** IPv6 from machines' /64s, when a family comes from them. */
  readonly #machines?: MachineRanges;
  readonly #book: PodCidrBook;
  readonly #queue: WorkQueue;
  readonly #recorder;
  readonly #log = logger("node-ipam");
  /** What this process wrote to each Node (its own write seen in a watch event is no other writer's). */
  readonly #written = new Map<string, string>();
  /** Set once another allocator was seen: nothing more is handed out. */
  #halted = false;
  /** Served Nodes that got pod CIDRs from another writer, with that writer. */
  readonly #othersWrote = new Map<string, string | undefined>();
  /** Nodes that wait (or hold a stale range), with why: the last reason told on each. */
  readonly #problems = new Map<string, { reason: string; message: string }>();

  constructor(ctx: ControllerContext<NodeIpamFlags>, families: FamilyPlan[], instances?: Instances) {
    this.#ctx = ctx;
    this.#families = families;
    this.#book = new PodCidrBook(families);
    const machine = families.some((f) => f.source === "machine");
    if (machine && instances?.machineRecord) this.#machines = new MachineRanges(instances, this.#book);
    this.#recorder = ctx.recorder(NODE_IPAM);
    this.#queue = new WorkQueue("node-ipam", {
      clock: ctx.clock,
      baseDelayMs: 1_000,
      maxDelayMs: 300_000,
      metrics: ctx.metrics,
    });
    const gauge = ctx.metrics.gauge(
      "node_ipam_problem_nodes",
      "Nodes the node IPAM controller cannot give pod CIDRs (or whose IPv6 range is no longer their machine's), by reason.",
    );
    ctx.metrics.onCollect(() => {
      gauge.clear();
      for (const { reason } of this.#problems.values()) gauge.add({ reason }, 1);
    });
    const name = (n: Node) => n.metadata?.name ?? "";
    ctx.informers.for(NODES).addHandlers({
      onAdd: (node) => {
        this.#occupy(node);
        this.#queue.add(name(node));
      },
      onUpdate: (old, node) => {
        const before = podCidrs(old).join(","), after = podCidrs(node).join(",");
        if (before !== after) {
          this.#occupy(node);
          // From none to some on a Node this allocator serves, and not what this process wrote: who
          // wrote them? (A Node it does not serve is none of its business: Q2.)
          if (!before && this.#written.get(name(node)) !== after) {
            if (managedNode(node)) this.#queue.add(WRITER_KEY + name(node));
          } else if (!before) this.#written.delete(name(node)); // ours, seen: nothing more to tell apart
        }
        if (before !== after || relevant(old) !== relevant(node)) this.#queue.add(name(node));
      },
      onDelete: (node) => {
        this.#book.free(node);
        this.#written.delete(name(node));
        this.#othersWrote.delete(name(node));
        this.#problems.delete(name(node));
        // A freed range may be what a waiting Node needs.
        for (const [waiting, p] of this.#problems) {
          if (p.reason === "CIDRNotAvailable") this.#queue.add(waiting);
        }
      },
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    const nodes = this.#ctx.informers.for(NODES);
    // Waiting Nodes and machine-derived ranges are looked at again each period (the server list is
    // the node controller's, refreshed on that period anyway).
    const clock = this.#ctx.clock;
    const periodic = clock.setInterval(() => {
      for (const node of nodes.list()) {
        const name = node.metadata?.name ?? "";
        if (this.#problems.has(name) || this.#machines?.rangeOf(node)) this.#queue.add(name);
      }
    }, this.#ctx.flags.nodeStatusUpdateFrequency);
    signal.addEventListener("abort", () => {
      clock.clearInterval(periodic);
      this.#queue.shutDown();
    }, { once: true });
    await runWorkers(
      this.#queue,
      (key, cancel) =>
        withPriority(
          "node",
          () =>
            key.startsWith(WRITER_KEY)
              ? this.#checkWriter(key.slice(WRITER_KEY.length), cancel)
              : this.#sync(key, cancel),
        ),
      { policy: reconcilePolicy, signal },
    );
  }

  async #sync(name: string, signal: AbortSignal): Promise<void> {
    const node = this.#ctx.informers.for(NODES).get(name);
    if (!node || node.metadata?.deletionTimestamp || !managedNode(node)) {
      return void this.#problems.delete(name);
    }
    if (podCidrs(node).length) return await this.#checkStale(node, signal);
    if (this.#halted) return;
    // Machine ranges first: a Node that waits for one takes nothing from the pools meanwhile.
    const fromMachines = new Map<FamilyPlan, Cidr>();
    for (const family of this.#families.filter((f) => f.source === "machine")) {
      const got = await this.#machines!.podCidr(node, family, signal);
      if (!got) return; // not initialized yet: its provider ID brings it back
      if ("reason" in got) return this.#wait(node, got.reason, got.message);
      const cidr = got;
      fromMachines.set(family, cidr);
    }
    const texts: string[] = [];
    /** Taken from the pools for this Node: given back unless written. */
    const taken: Cidr[] = [];
    try {
      for (const family of this.#families) {
        let cidr = fromMachines.get(family);
        if (!cidr) {
          cidr = this.#fromPool(node, family);
          if (!cidr) return;
          taken.push(cidr);
        }
        texts.push(cidr.text);
      }
      this.#written.set(name, texts.join(","));
      await this.#ctx.client.patch(NODES, name, "merge", { spec: { podCIDR: texts[0], podCIDRs: texts } }, {
        signal,
        fieldManager: this.#ctx.client.fieldManager,
      });
      this.#problems.delete(name);
      this.#log.info("gave Node {node} pod CIDRs {cidrs}", { node: name, cidrs: texts.join(", ") });
      taken.length = 0; // kept: the pools hold them for this Node now
    } catch (err) {
      this.#written.delete(name);
      // 422: someone else set them meanwhile; the watch event brings the check of who.
      if (err instanceof KubeApiError && err.status === 422) return;
      throw err;
    } finally {
      for (const cidr of taken) this.#book.release(cidr, name);
    }
  }

  #fromPool(node: Node, family: FamilyPlan): Cidr | undefined {
    const pool = this.#book.pool(family.family)!;
    const cidr = pool.allocate(node.metadata!.name!);
    if (cidr) return cidr;
    return this.#wait(
      node,
      "CIDRNotAvailable",
      `no /${family.prefix} is left in --cluster-cidr ${family.clusterRange.text} (${pool.used} Nodes hold all ${pool.size}): ` +
        "the Node gets pod CIDRs when another Node leaves, or with a wider --cluster-cidr",
    );
  }

  /** Reports once (per reason and message) why the Node waits; undefined for the caller to return. */
  #wait(node: Node, reason: string, message: string): undefined {
    const name = node.metadata!.name!;
    const last = this.#problems.get(name);
    if (last?.reason === reason && last.message === message) return;
    this.#problems.set(name, { reason, message });
    this.#recorder.event(NODES, node, "Warning", reason, `No pod CIDRs for Node ${name}: ${message}`);
    this.#log.warning("no pod CIDRs for Node {node}: {message}", { node: name, message });
  }

  /** A Node holding an IPv6 range of its machine's: is that still the machine's /64? */
  async #checkStale(node: Node, signal: AbortSignal): Promise<void> {
    const name = node.metadata!.name!;
    const message = this.#machines && await this.#machines.stale(node, signal);
    if (!message) return void this.#problems.delete(name);
    const last = this.#problems.get(name);
    if (last?.message === message) return;
    this.#problems.set(name, { reason: "PodCIDRStale", message });
    this.#recorder.event(NODES, node, "Warning", "PodCIDRStale", message);
    this.#log.warning("{message}", { message });
  }

  /**
   * Who set the Node's pod CIDRs, when this process did not: told on the Node; the
   * {@link OTHER_ALLOCATOR_NODES}th such Node means another allocator, which stops this one.
   */
  async #checkWriter(name: string, signal: AbortSignal): Promise<void> {
    if (this.#halted) return;
    const node = await this.#ctx.client.get(NODES, name, { signal }).catch((err) => {
      if (err instanceof KubeApiError && err.isNotFound) return undefined;
      throw err;
    });
    if (!node || !managedNode(node)) return;
    const writer = podCidrWriter(node);
    // Another replica of ours (a leader before this one) is no other allocator.
    if (writer === this.#ctx.client.fieldManager) return;
    this.#othersWrote.set(name, writer);
    if (this.#othersWrote.size < OTHER_ALLOCATOR_NODES) {
      const message = otherWriter(name, podCidrs(node), writer);
      this.#recorder.event(NODES, node, "Warning", "PodCIDRFromOtherWriter", message);
      this.#log.warning("{message}", { message });
      return;
    }
    const message = otherAllocator([...this.#othersWrote.keys()], [...this.#othersWrote.values()]);
    this.#halted = true;
    this.#ctx.conditions?.set(CONDITION, message);
    this.#recorder.event(NODES, node, "Warning", "PodCIDRAllocatorConflict", message);
    this.#log.error("{message}", { message });
  }

  /** Takes the Node's pod CIDRs out of the pools; one that is another Node's is reported. */
  #occupy(node: Node): void {
    const name = node.metadata?.name ?? "";
    const { conflicts, misfits } = this.#book.occupy(node);
    for (const { cidr, why } of misfits) {
      this.#recorder.event(
        NODES,
        node,
        "Warning",
        "PodCIDRNotInPool",
        `Node ${name}'s pod CIDR ${cidr} is ${why}`,
      );
    }
    for (const { cidr, holder } of conflicts) {
      this.#recorder.event(
        NODES,
        node,
        "Warning",
        "PodCIDRConflict",
        `Node ${name}'s pod CIDR ${cidr} is also Node ${holder}'s (set when the Node was registered): ` +
          `pods of the two collide; the range stays Node ${holder}'s in the allocator`,
      );
    }
  }
}
