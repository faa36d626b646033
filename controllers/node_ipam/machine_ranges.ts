/**
 * IPv6 pod CIDRs from machines (`CloudAllocator`): index 1 of the Node's machine's /64, which the
 * machine's record gives ({@link Instances.machineRecord}, found by provider ID), and whether a
 * range handed out so is still in its machine's /64.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { Instances } from "../../providers/provider.ts";
import type { FamilyPlan } from "./node_ipam_plan.ts";
import type { PodCidrBook } from "./node_ipam_book.ts";
import { machineIpv6Net, machinePodCidr, staleRange } from "./node_ipam_checks.ts";
import { podCidrs } from "../node_metadata.ts";
import { type Cidr, cidrWithin, parseCidr } from "../../lib/cidr.ts";

/** Why a Node gets no range from its machine (yet): an event reason and its message. */
export interface Waiting {
  reason: string;
  message: string;
}

/** See the module doc. */
export class MachineRanges {
  /** Ranges from the records of `instances`; `book` says who holds one already. */
  constructor(readonly instances: Instances, readonly book: PodCidrBook) {}

  /**
   * The Node's IPv6 range of `family` from its machine, why it waits, or undefined before the Node
   * has a provider ID (its initialization brings it back).
   */
  async podCidr(node: Node, family: FamilyPlan, signal: AbortSignal): Promise<Cidr | Waiting | undefined> {
    const name = node.metadata!.name!;
    const providerID = node.spec?.providerID;
    if (!providerID) return undefined;
    const record = await this.instances.machineRecord!(node, "initialize", signal);
    if (!record) {
      return {
        reason: "NoMachine",
        message: `no machine has provider ID ${providerID} under the Node's name`,
      };
    }
    const net = machineIpv6Net(record);
    if (!net) {
      return {
        reason: "NoIPv6Range",
        message:
          `machine ${providerID} has no IPv6 /64 (created without IPv6, or its primary IPv6 unassigned): ` +
          "the Node gets no pod CIDRs until it has one",
      };
    }
    const cidr = machinePodCidr(net, family.prefix)!;
    if (!cidrWithin(cidr, family.clusterRange)) {
      return {
        reason: "PodCIDROutsideClusterCIDR",
        message:
          `${cidr.text} (of machine ${providerID}'s ${net.text}) is outside --cluster-cidr's IPv6 range ` +
          `${family.clusterRange.text}: widen it to take in the servers' ranges`,
      };
    }
    const holder = this.book.holderOf(cidr);
    if (holder && holder !== name) {
      return {
        reason: "PodCIDRConflict",
        message: `${cidr.text} is already Node ${holder}'s (one machine, two Nodes)`,
      };
    }
    return cidr;
  }

  /** What to say when the Node's IPv6 range is no longer in its machine's /64; undefined when it is (or unknown). */
  async stale(node: Node, signal: AbortSignal): Promise<string | undefined> {
    const range = this.rangeOf(node);
    if (!range || !node.spec?.providerID) return undefined;
    const record = await this.instances.machineRecord!(node, "initialize", signal);
    const net = record && machineIpv6Net(record);
    if (!net || cidrWithin(range, net)) return undefined;
    return staleRange(node.metadata!.name!, range, net);
  }

  /** The Node's IPv6 pod CIDR (from its machine), if it has one. */
  rangeOf(node: Node): Cidr | undefined {
    return podCidrs(node).map((c) => parseCidr(c)).find((c) => c?.family === 6);
  }
}
