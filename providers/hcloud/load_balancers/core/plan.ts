/**
 * Load balancer attributes as a pure diff: `(balancer as it is, what the Service asks for) → the
 * Hetzner actions that close the gap`, in the order they must run. Table-tested without a cloud;
 * `actions.ts` runs them. Services, targets and the network attachment have their own steps.
 *
 * @module
 */
import type { components } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "./labels.ts";
import { type DesiredService, serviceDiffers } from "./desired.ts";

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
  | { kind: "update_service"; service: DesiredService }
  | { kind: "remove_target"; target: TargetRef }
  | { kind: "add_target"; target: TargetRef & { use_private_ip?: boolean } };

/** A target as `add_target`/`remove_target` name it. */
export type TargetRef =
  | { type: "server"; server: { id: number } }
  | { type: "label_selector"; label_selector: { selector: string } }
  | { type: "ip"; ip: { ip: string } };

type Target = NonNullable<LB["targets"]>[number];

/** The reference that names an existing target in `remove_target`. */
export function targetRef(target: Target): TargetRef {
  return target.type === "server"
    ? { type: "server", server: { id: target.server!.id } }
    : target.type === "ip"
    ? { type: "ip", ip: { ip: target.ip!.ip } }
    : { type: "label_selector", label_selector: { selector: target.label_selector!.selector } };
}

/** Who the balancer belongs to: the Service's UID and this cluster's identity (when known). */
export interface Ownership {
  serviceUid: string;
  clusterId?: string;
  /** The Service's identity labels (labels.ts); drift repair, which lacks them, keeps what is there. */
  identity?: Record<string, string>;
}

/** The labels that say a balancer is the Service's (on top of the user's). */
export function ownerLabels(owner: Ownership): Record<string, string> {
  return {
    [SERVICE_UID_LABEL]: owner.serviceUid,
    ...(owner.clusterId ? { [CLUSTER_ID_LABEL]: owner.clusterId } : {}),
    ...owner.identity,
  };
}

/**
 * Owner labels and name, reverse DNS, algorithm and type: what runs before the network step.
 * `owner`: the Service's ownership, or the exact owner labels (a shared balancer's record).
 */
export function planShape(
  lb: LB,
  spec: LoadBalancerSpec,
  owner: Ownership | { labels: Record<string, string> },
): LbAction[] {
  const actions: LbAction[] = [];
  const name = spec.name && spec.name !== lb.name ? spec.name : undefined;
  const wanted: Record<string, string> = {
    ...spec.labels,
    ...("labels" in owner ? owner.labels : ownerLabels(owner)),
  };
  const missing = Object.entries(wanted).some(([key, value]) => lb.labels?.[key] !== value);
  if (missing || name) {
    actions.push({
      kind: "update",
      labels: { ...lb.labels, ...wanted },
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
  // A redirect holds port 80: the update that ends it goes before an add that may need the port.
  const endsRedirect = (want: DesiredService) =>
    (lb.services ?? []).some((s) => s.listen_port === want.listen_port && s.http?.redirect_http) &&
    !want.http?.redirect_http;
  const first = desired.filter(endsRedirect);
  for (const want of [...first, ...desired.filter((d) => !first.includes(d))]) {
    const actual = (lb.services ?? []).find((s) => s.listen_port === want.listen_port);
    if (!actual) actions.push({ kind: "add_service", service: want });
    else if (serviceDiffers(want, actual)) actions.push({ kind: "update_service", service: want });
  }
  return actions;
}

/**
 * One label-selector target: the selector added first, then every other target (the official
 * CCM's server targets, say) removed, so traffic never loses its backends while migrating. A
 * changed private-IP flag means remove, then add (the API holds one target per selector). IP
 * targets are Robot Nodes' and reconciled on their own.
 */
export function planLabelTarget(lb: LB, selector: string, usePrivateIp: boolean): LbAction[] {
  const targets = lb.targets ?? [];
  const same = (t: Target) => t.type === "label_selector" && t.label_selector?.selector === selector;
  const mine = (t: Target) => same(t) && (t.use_private_ip ?? false) === usePrivateIp;
  const actions: LbAction[] = targets.filter((t) => same(t) && !mine(t))
    .map((t) => ({ kind: "remove_target", target: targetRef(t) }));
  if (!targets.some(mine)) {
    actions.push({
      kind: "add_target",
      target: { type: "label_selector", label_selector: { selector }, use_private_ip: usePrivateIp },
    });
  }
  for (const t of targets) {
    if (!same(t) && t.type !== "ip") actions.push({ kind: "remove_target", target: targetRef(t) });
  }
  return actions;
}

/**
 * Server targets: foreign and stale ones (or ones with the wrong private-IP flag) removed, missing
 * ones added in the order given; whether an add still fits the type is decided while executing.
 */
export function planServerTargets(lb: LB, ids: number[], usePrivateIp: boolean): LbAction[] {
  const wanted = new Set(ids);
  const keep = new Set<number>();
  const actions: LbAction[] = [];
  for (const t of lb.targets ?? []) {
    if (t.type === "ip") continue;
    const id = t.type === "server" ? t.server?.id : undefined;
    if (id !== undefined && wanted.has(id) && (t.use_private_ip ?? false) === usePrivateIp) keep.add(id);
    else actions.push({ kind: "remove_target", target: targetRef(t) });
  }
  for (const id of ids) {
    if (!keep.has(id)) {
      actions.push({
        kind: "add_target",
        target: { type: "server", server: { id }, use_private_ip: usePrivateIp },
      });
    }
  }
  return actions;
}
