/**
 * Pure parts of the node IPAM controller: the IPv6 range a machine's record
 * gives (index 1 of its /64), whether a Node's range is still its machine's, and who wrote a Node's
 * `spec.podCIDRs` (from `metadata.managedFields`, which the informer's cache drops).
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { MachineRecord } from "../../providers/provider.ts";
import { managedNode } from "../node_metadata.ts";
import { type Cidr, formatIp, parseCidr } from "../../lib/cidr.ts";
import { subnetAt } from "../../lib/cidr_pool.ts";

/** The machine's IPv6 /64 (the first /64 of a shorter range), or undefined when it has none. */
export function machineIpv6Net(record: MachineRecord): Cidr | undefined {
  for (const text of record.cidrs) {
    const cidr = parseCidr(text);
    if (cidr?.family === 6 && cidr.prefix <= 64) return parseCidr(`${formatIp(6, cidr.network)}/64`);
  }
  return undefined;
}

/** The Node's IPv6 pod range from its machine's /64: the subnet of length `prefix` at index 1. */
export function machinePodCidr(net: Cidr, prefix: number): Cidr | undefined {
  return subnetAt(net, prefix, 1n);
}

/**
 * The field manager that owns `spec.podCIDRs` (or `spec.podCIDR`) in the Node's managed fields, or
 * undefined when none is recorded.
 */
export function podCidrWriter(node: Node): string | undefined {
  for (const entry of node.metadata?.managedFields ?? []) {
    const spec = (entry.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.["f:spec"];
    if (spec && ("f:podCIDRs" in spec || "f:podCIDR" in spec)) return entry.manager;
  }
  return undefined;
}

/**
 * Nodes this allocator serves that must get pod CIDRs from another writer before it stops: a
 * kubelet may set its own Node's once (security review Q2), so one Node, or two, is no proof of another
 * allocator; kube-controller-manager's allocator serves every new Node, so it is seen by the third.
 */
export const OTHER_ALLOCATOR_NODES = 3;

/** What the controller says of served Node `name` that got `cidrs` from `writer`: kept, taken out of the pool. */
export function otherWriter(name: string, cidrs: string[], writer: string | undefined): string {
  return `Node ${name} got pod CIDRs ${cidrs.join(", ")} from ${
    writer ? `"${writer}"` : "another writer"
  }, ` +
    "not from deno-ccm (its kubelet, or another allocator): kept, and taken out of deno-ccm's pool. " +
    `deno-ccm's node-ipam-controller stops if ${OTHER_ALLOCATOR_NODES} Nodes get theirs so`;
}

/** What the controller says when served Nodes `names` got pod CIDRs from others (another allocator): it stops. */
export function otherAllocator(names: string[], writers: (string | undefined)[]): string {
  const who = [...new Set(writers.map((w) => w ? `"${w}"` : "another writer"))].join(", ");
  return `Nodes ${names.join(", ")} got pod CIDRs from ${who}, ` +
    "not from deno-ccm: another allocator runs (kube-controller-manager with --allocate-node-cidrs=true; " +
    "k3s and RKE2 run it by default). Two allocators can give one range to two Nodes, so deno-ccm's " +
    "node-ipam-controller stopped handing out pod CIDRs. Turn one off (kube-controller-manager: " +
    "--controllers=*,-node-ipam-controller; deno-ccm: drop node-ipam-controller from --controllers) and " +
    "restart deno-ccm";
}

/** What the controller says of Node `name` whose IPv6 pod range `range` is no longer in its machine's `net`. */
export function staleRange(name: string, range: Cidr, net: Cidr): string {
  return `Node ${name}'s IPv6 pod CIDR ${range.text} is not in its machine's ${net.text} any more ` +
    "(the server's IPv6 changed); pod CIDRs cannot change once set: drain and delete the Node, and let its " +
    "kubelet register it again";
}

/** What of a Node brings it back to the controller when it changes (besides its pod CIDRs). */
export function relevant(node: Node): string {
  return JSON.stringify([
    node.spec?.providerID,
    managedNode(node),
    (node.status?.addresses ?? []).filter((a) => a.type === "ExternalIP"),
  ]);
}
