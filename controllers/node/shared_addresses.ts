/**
 * Addresses a Node shares with another Node: an address override copied from a neighbour (security
 * probe N11), or a typo, silently moves that Node's traffic and pod route to the other. Said when the
 * addresses are written, so it costs nothing in steady state.
 *
 * @module
 */
import type { NodeAddress } from "kubernetes-types/core/v1.d.ts";
import type { NodeIndex } from "./node_index.ts";

/** The InternalIP and ExternalIP addresses of `addresses` that another Node in `index` also has. */
export function sharedAddresses(
  name: string,
  addresses: NodeAddress[],
  index: NodeIndex,
): { type: string; address: string; nodes: string[] }[] {
  return addresses.filter((a) => a.type === "InternalIP" || a.type === "ExternalIP").map((a) => ({
    type: a.type,
    address: a.address,
    nodes: index.withAddress(a.address).filter((other) => other !== name).sort(),
  })).filter((s) => s.nodes.length > 0);
}
