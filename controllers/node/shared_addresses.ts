/**
 * Addresses a Node shares with another Node: an address override copied from a neighbour (security
 * probe N11), or a typo, silently moves that Node's traffic and pod route to the other. Said when the
 * addresses are written, so it costs nothing in steady state.
 *
 * @module
 */
import type { Node, NodeAddress } from "kubernetes-types/core/v1.d.ts";

/** The InternalIP and ExternalIP addresses of `addresses` that another Node of `nodes` also has. */
export function sharedAddresses(
  name: string,
  addresses: NodeAddress[],
  nodes: Node[],
): { type: string; address: string; nodes: string[] }[] {
  const mine = addresses.filter((a) => a.type === "InternalIP" || a.type === "ExternalIP");
  if (mine.length === 0) return [];
  const holders = new Map<string, string[]>();
  for (const node of nodes) {
    const other = node.metadata?.name;
    if (!other || other === name) continue;
    for (const a of node.status?.addresses ?? []) {
      if (a.type !== "InternalIP" && a.type !== "ExternalIP") continue;
      holders.set(a.address, [...holders.get(a.address) ?? [], other]);
    }
  }
  return mine.filter((a) => holders.has(a.address)).map((a) => ({
    type: a.type,
    address: a.address,
    nodes: [...new Set(holders.get(a.address))].sort(),
  }));
}
