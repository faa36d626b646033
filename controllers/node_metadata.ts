/**
 * Pure functions of the node controller: the labels and addresses a Node gets from its instance
 * metadata, with upstream's rules (beta label twins, protected label prefixes, the kubelet's
 * provided node IP).
 *
 * @module
 */
import type { Node, NodeAddress, Taint } from "kubernetes-types/core/v1.d.ts";
import type { InstanceMetadata } from "../providers/provider.ts";

export { PROVIDED_NODE_IP, SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../kube/well_known.ts";
import {
  INSTANCE_TYPE_LABELS,
  MANAGED_LABEL,
  PROVIDED_NODE_IP,
  REGION_LABELS,
  ZONE_LABELS,
} from "../kube/well_known.ts";
import { parseGoBool } from "../lib/go_bool.ts";

/** False for a Node labelled `node.deno-ccm.io/managed` with Go's false: not the cloud's, left alone. */
export function managedNode(node: Node): boolean {
  const value = node.metadata?.labels?.[MANAGED_LABEL];
  return value === undefined || parseGoBool(value) !== false;
}

/** A Node's pod CIDRs (`spec.podCIDRs`, else the single `spec.podCIDR`). */
export function podCidrs(node: Node): string[] {
  const list = node.spec?.podCIDRs ?? [];
  return list.length ? list : node.spec?.podCIDR ? [node.spec.podCIDR] : [];
}

/** True when the Node carries the taint with this key. */
export function hasTaint(node: Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}

/** The Node's taints without the one with `key`. */
export function withoutTaint(node: Node, key: string): Taint[] {
  return (node.spec?.taints ?? []).filter((t) => t.key !== key);
}

const LABEL_PAIRS: [keyof InstanceMetadata, string, string][] = [
  ["instanceType", ...INSTANCE_TYPE_LABELS],
  ["zone", ...ZONE_LABELS],
  ["region", ...REGION_LABELS],
];

/**
 * Labels to set at initialization: instance type, zone and region with their beta twins (only
 * when non-empty), plus the provider's additional labels except keys under `kubernetes.io` /
 * `k8s.io` and keys the Node already has.
 */
export function initLabels(node: Node, meta: InstanceMetadata): Record<string, string> {
  const existing = node.metadata?.labels ?? {};
  const labels: Record<string, string> = {};
  for (const [field, ga, beta] of LABEL_PAIRS) {
    const value = meta[field];
    if (typeof value === "string" && value) {
      labels[ga] = value;
      labels[beta] = value;
    }
  }
  for (const [key, value] of Object.entries(meta.additionalLabels ?? {})) {
    if (/(^|\.)(kubernetes|k8s)\.io\//.test(key) || key in existing) continue;
    labels[key] = value;
  }
  return labels;
}

/** For initialized Nodes: GA labels copied from beta ones when missing or different (upstream). */
export function labelRepairs(node: Node): Record<string, string> {
  const labels = node.metadata?.labels ?? {};
  const repairs: Record<string, string> = {};
  for (const [, ga, beta] of LABEL_PAIRS) {
    if (labels[beta] && labels[ga] !== labels[beta]) repairs[ga] = labels[beta];
  }
  return repairs;
}

/**
 * The Node's addresses from the cloud's, like upstream `updateNodeAddress`: a missing Hostname is
 * taken from the kubelet; with a provided node IP, every such IP must be among the cloud's
 * addresses (else an error naming it), and for each address type it matched only the matching
 * addresses are kept. Returns `undefined` when the cloud reported no addresses.
 */
export function nodeAddresses(node: Node, cloud: NodeAddress[]): NodeAddress[] | undefined {
  if (cloud.length === 0) return undefined;
  let addresses = [...cloud];
  if (!addresses.some((a) => a.type === "Hostname")) {
    const hostname = (node.status?.addresses ?? []).find((a) => a.type === "Hostname");
    if (hostname) addresses.push(hostname);
  }
  const provided = (node.metadata?.annotations?.[PROVIDED_NODE_IP] ?? "").split(",").map((s) => s.trim())
    .filter(Boolean);
  if (provided.length === 0) return addresses;
  const matchedTypes = new Set<string>();
  for (const ip of provided) {
    const match = addresses.find((a) => a.address === ip && a.type !== "Hostname");
    if (!match) {
      throw new Error(
        `the kubelet's node IP ${ip} (${PROVIDED_NODE_IP}) is not among the server's addresses ` +
          `(${
            cloud.filter((a) => a.type !== "Hostname").map((a) => `${a.type} ${a.address}`).join(", ") ||
            "none"
          })`,
      );
    }
    matchedTypes.add(match.type);
  }
  addresses = addresses.filter((a) => !matchedTypes.has(a.type) || provided.includes(a.address));
  // The node IPs first within their type, in the order the kubelet gave them.
  return [
    ...provided.map((ip) => addresses.find((a) => a.address === ip)!),
    ...addresses.filter((a) => !provided.includes(a.address)),
  ];
}

/** Equal as a set of type→address pairs (order does not matter), as upstream compares. */
export function sameAddresses(a: NodeAddress[] = [], b: NodeAddress[] = []): boolean {
  const key = (list: NodeAddress[]) => list.map((x) => `${x.type}=${x.address}`).sort().join(",");
  return key(a) === key(b);
}

/** True when the Node's Ready condition is True. */
export function isReady(node: Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** Node status fields no controller reads (kubelets report them; images alone are ~10 kB a Node). */
const UNREAD_NODE_STATUS = [
  "images",
  "nodeInfo",
  "capacity",
  "allocatable",
  "daemonEndpoints",
  "volumesInUse",
  "volumesAttached",
  "config",
  "runtimeHandlers",
  "features",
];

/**
 * The Node conditions controllers and providers read: `Ready` (eligibility, deletion) and
 * `NetworkUnavailable` (the route controller's). A kubelet reports four more, each with a message,
 * and a heartbeat time no controller reads (~40% of a cached Node's strings).
 */
const READ_CONDITIONS = new Set(["Ready", "NetworkUnavailable"]);

/**
 * The Node informer's transform: drops the status fields above, the conditions nobody reads and
 * the heartbeat times before a Node is cached.
 */
export function trimNodeStatus(object: unknown): unknown {
  const status = (object as { status?: Record<string, unknown> }).status;
  if (status) {
    for (const field of UNREAD_NODE_STATUS) delete status[field];
    if (Array.isArray(status.conditions)) {
      status.conditions = (status.conditions as { type?: string; lastHeartbeatTime?: string }[])
        .filter((c) => READ_CONDITIONS.has(c?.type ?? ""))
        .map(({ lastHeartbeatTime: _, ...kept }) => kept);
    }
  }
  return object;
}

/** Informer transforms of the controllers, by resource plural. */
export const INFORMER_TRANSFORMS: Record<string, (object: unknown) => unknown> = { nodes: trimNodeStatus };
