/**
 * Load balancer attributes as a pure diff: `(balancer as it is, what the Service asks for) → the
 * Hetzner actions that close the gap`, in the order they must run. Table-tested without a cloud;
 * `lb_actions.ts` runs them. Services, targets and the network attachment have their own steps.
 *
 * @module
 */
import type { components } from "./api_types.ts";
import type { LoadBalancerSpec } from "./lb_annotations.ts";
import { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "./lb_labels.ts";
import { type DesiredService, serviceDiffers } from "./lb_desired.ts";

type LB = components["schemas"]["load_balancer"];

/** One change to a load balancer, as one Hetzner call. */
export type LbAction =
  | { kind: "update"; labels: Record<string, string>; name?: string }
  | { kind: "change_dns_ptr"; ip: string; dnsPtr: string }
  | { kind: "change_algorithm"; algorithm: "round_robin" | "least_connections" }
  | { kind: "change_type"; type: string }
  | { kind: "public_interface"; enabled: boolean }
  | { kind: "change_protection"; delete: boolean }
  | { kind: "delete_service"; listenPort: number }
  | { kind: "add_service"; service: DesiredService }
  | { kind: "update_service"; service: DesiredService };

/** Who the balancer belongs to: the Service's UID and this cluster's identity (when known). */
export interface Ownership {
  serviceUid: string;
  clusterId?: string;
}

/** Owner labels and name, reverse DNS, algorithm and type: what runs before the network step. */
export function planShape(lb: LB, spec: LoadBalancerSpec, owner: Ownership): LbAction[] {
  const actions: LbAction[] = [];
  const name = spec.name && spec.name !== lb.name ? spec.name : undefined;
  const clusterLabel: Record<string, string> =
    owner.clusterId && lb.labels?.[CLUSTER_ID_LABEL] !== owner.clusterId
      ? { [CLUSTER_ID_LABEL]: owner.clusterId }
      : {};
  if (lb.labels?.[SERVICE_UID_LABEL] !== owner.serviceUid || name || Object.keys(clusterLabel).length) {
    actions.push({
      kind: "update",
      labels: { ...lb.labels, [SERVICE_UID_LABEL]: owner.serviceUid, ...clusterLabel },
      ...(name ? { name } : {}),
    });
  }
  for (
    const [address, wanted] of [[lb.public_net?.ipv4, spec.ipv4Rdns], [
      lb.public_net?.ipv6,
      spec.ipv6Rdns,
    ]] as const
  ) {
    if (address?.ip && wanted !== undefined && wanted !== address.dns_ptr) {
      actions.push({ kind: "change_dns_ptr", ip: address.ip, dnsPtr: wanted });
    }
  }
  if (spec.algorithm && spec.algorithm !== lb.algorithm?.type) {
    actions.push({ kind: "change_algorithm", algorithm: spec.algorithm });
  }
  if (spec.type && spec.type !== lb.load_balancer_type?.name) {
    actions.push({ kind: "change_type", type: spec.type });
  }
  return actions;
}

/** The public interface and delete protection: what runs after the network step. */
export function planExposure(lb: LB, spec: LoadBalancerSpec): LbAction[] {
  const actions: LbAction[] = [];
  const publicEnabled = lb.public_net?.enabled ?? true;
  if (spec.disablePublicNetwork !== undefined && spec.disablePublicNetwork === publicEnabled) {
    actions.push({ kind: "public_interface", enabled: !spec.disablePublicNetwork });
  }
  if (spec.protectDelete !== undefined && spec.protectDelete !== (lb.protection?.delete ?? false)) {
    actions.push({ kind: "change_protection", delete: spec.protectDelete });
  }
  return actions;
}

/** Services (ports): ports nobody asks for go first (freeing the type's service slots), then adds and updates. */
export function planServices(lb: LB, desired: DesiredService[]): LbAction[] {
  const actions: LbAction[] = [];
  for (const actual of lb.services ?? []) {
    if (!desired.some((d) => d.listen_port === actual.listen_port)) {
      actions.push({ kind: "delete_service", listenPort: actual.listen_port });
    }
  }
  for (const want of desired) {
    const actual = (lb.services ?? []).find((s) => s.listen_port === want.listen_port);
    if (!actual) actions.push({ kind: "add_service", service: want });
    else if (serviceDiffers(want, actual)) actions.push({ kind: "update_service", service: want });
  }
  return actions;
}
