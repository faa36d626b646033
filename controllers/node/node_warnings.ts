/**
 * The cloud node controller's Warnings on Nodes: what the provider warns of, Nodes matched to one
 * server (from the index of Nodes by provider ID, and this controller's writes the informer does not
 * show yet), addresses another Node has too, and synced labels or taints left as someone else wrote
 * them. Said, not fixed: a person decides.
 *
 * @module
 */
import type { Node, NodeAddress } from "kubernetes-types/core/v1.d.ts";
import type { EventRecorder } from "../../kube/events.ts";
import type { Informer } from "../../kube/informer.ts";
import { NODES } from "../../kube/resources.ts";
import { sharedAddresses } from "./shared_addresses.ts";
import type { NodeIndex } from "./node_index.ts";

/** The Warnings one node controller says. */
export class NodeWarnings {
  readonly #recorder: EventRecorder;
  readonly #informer: Informer<Node>;
  readonly #index: NodeIndex;
  /**
   * Provider IDs the controller just wrote, until the informer shows them: the next Node's sync may
   * start before the watch brings the last one's update, and must still see it.
   */
  readonly #written = new Map<string, string>();

  constructor(recorder: EventRecorder, informer: Informer<Node>, index: NodeIndex) {
    this.#recorder = recorder;
    this.#informer = informer;
    this.#index = index;
  }

  /** Remembers that `name` was just given `providerID`. */
  written(name: string, providerID: string): void {
    this.#written.set(name, providerID);
  }

  /** Several Nodes matched to one server all get its addresses: say so on each (it is not fixed here). */
  duplicates(node: Node, providerID: string): void {
    const informer = this.#informer;
    // Forget what the informer now shows (or what is gone): these are the writes still in flight.
    for (const name of this.#written.keys()) {
      const seen = informer.get(name);
      if (!seen || seen.spec?.providerID) this.#written.delete(name);
    }
    const self = node.metadata?.name;
    const otherNames = new Set(this.#index.withProviderID(providerID));
    for (const [name, written] of this.#written) if (written === providerID) otherNames.add(name);
    otherNames.delete(self!);
    const others = [...otherNames].map((name) => informer.get(name)).filter((n): n is Node => !!n);
    if (others.length === 0) return;
    const names = [node, ...others].map((n) => n.metadata?.name).sort().join(", ");
    for (const n of [node, ...others]) {
      this.#recorder.event(
        NODES,
        n,
        "Warning",
        "DuplicateProviderID",
        `Nodes ${names} all match server ${providerID}: they share its addresses and lifecycle; ` +
          "rename or remove the extra Nodes",
      );
    }
  }

  /** Synced labels or taints (`keys`) someone else wrote: left as they are, and said so. */
  conflicts(node: Node, keys: string[] | undefined, what: "label" | "taint" = "label"): void {
    if (!keys?.length) return;
    this.#recorder.event(
      NODES,
      node,
      "Warning",
      what === "label" ? "SyncedLabelConflict" : "SyncedTaintConflict",
      `${what}s ${
        keys.join(", ")
      } were not written by the CCM: left as they are instead of the cloud's values`,
    );
  }

  /** A Warning for each address (just written to `node`) that another Node has too. */
  shared(node: Node, addresses: NodeAddress[]): void {
    const name = node.metadata!.name!;
    for (const s of sharedAddresses(name, addresses, this.#index)) {
      this.#recorder.event(
        NODES,
        node,
        "Warning",
        "DuplicateNodeAddress",
        `${s.type} ${s.address} is also an address of ${s.nodes.join(", ")}: traffic and pod routes meant ` +
          "for one Node can reach the other (an address override copied, or a typo?)",
      );
    }
  }

  /** The provider's warnings about `node`, each as its own Warning. */
  say(node: Node, warnings: { reason: string; message: string }[]): void {
    for (const w of warnings) this.#recorder.event(NODES, node, "Warning", w.reason, w.message);
  }
}
