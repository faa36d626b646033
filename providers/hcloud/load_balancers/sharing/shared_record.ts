/**
 * Shared balancers, the pure part: the share key, the record of ownership on the balancer, and the
 * plans of a Service joining and leaving (table-tested; shared.ts runs them).
 *
 * The record lives on the balancer, where only holders of the cloud token can write: one label per
 * port, `deno-ccm/port-<port>=<Service name>` (all members are of one namespace, also a label),
 * and a digest of the settings of the whole balancer. A join claims its ports before adding them;
 * a leave removes its ports before dropping its claims. So after a crash between two writes every
 * port on the balancer still has an owner, and a claim without its port is completed by the next
 * sync or dropped by the next leave.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import { type DesiredService, serviceDiffers } from "../core/desired.ts";
import { type LbAction, planLabelTarget } from "../core/plan.ts";
import {
  CLUSTER_ID_LABEL,
  SERVICE_NAMESPACE_LABEL,
  SHARE_LABEL,
  SHARE_PORT_LABEL_PREFIX,
  SHARE_SETTINGS_LABEL,
} from "../../names.ts";

type LB = Schemas["load_balancer"];

/** The labels that find a namespace's shared balancers of this cluster (with a key: one of them). */
export function shareSelector(clusterId: string, namespace: string, key?: string): string {
  return `${CLUSTER_ID_LABEL}=${clusterId},${SERVICE_NAMESPACE_LABEL}=${namespace},${SHARE_LABEL}` +
    (key === undefined ? "" : `=${key}`);
}

/**
 * The default name of a shared balancer: `<namespace>-<key>-<digest>`, the digest over the cluster,
 * namespace and key (probe P3). Without it `a`+`b-c` and `a-b`+`c` named one balancer, and a plain
 * Service could take a namespace's name before its first shared Service came; a tenant cannot
 * compute the digest without the cluster's identity (the kube-system namespace's UID). Balancers
 * made under the old name are found by their labels, so nothing is renamed.
 */
export function sharedName(namespace: string, key: string, clusterId: string): string {
  const digest = createHash("sha256").update(`${clusterId}\0${namespace}\0${key}`).digest("hex").slice(0, 10);
  return `${namespace.slice(0, 63 - key.length - 12)}-${key}-${digest}`;
}

/**
 * A digest of the settings that belong to the whole balancer, as the Service asks for them. Members
 * must agree on them: a Service whose digest differs does not join (the one member may change them).
 */
export async function settingsDigest(spec: LoadBalancerSpec): Promise<string> {
  const whole = [
    spec.name,
    spec.location,
    spec.networkZone,
    spec.type,
    spec.algorithm,
    spec.disablePublicNetwork,
    spec.ipv6Disabled,
    spec.disablePrivateIngress,
    spec.usePrivateIp,
    spec.privateIpv4,
    spec.privateSubnetIpRange,
    spec.ipv4Rdns,
    spec.ipv6Rdns,
    spec.protectDelete,
    Object.entries(spec.labels).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
  ];
  return (await sha256Hex(JSON.stringify(whole))).slice(0, 16);
}

/** The settings of the whole balancer a Service sets, in words, for the message that refuses it. */
export function wholeSettingsNamed(spec: LoadBalancerSpec): string {
  const named = Object.entries({
    name: spec.name,
    location: spec.location,
    "network-zone": spec.networkZone,
    type: spec.type,
    "algorithm-type": spec.algorithm,
    "disable-public-network": spec.disablePublicNetwork,
    "private-ipv4": spec.privateIpv4,
    "private-subnet-ip-range": spec.privateSubnetIpRange,
    "ipv4-rdns": spec.ipv4Rdns,
    "ipv6-rdns": spec.ipv6Rdns,
    "protection-delete": spec.protectDelete,
  }).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  return named.length ? named.join(", ") : "no settings of the whole balancer (all defaults)";
}

/**
 * The settings of the whole balancer that set `spec` apart from the shared balancer as it is (its
 * type, location, algorithm, name, protection, public interface): the ones to change. When none of
 * those differ (the difference is in labels, a subnet, rDNS), every setting is named.
 */
export function wholeSettingsDiffering(spec: LoadBalancerSpec, lb: Schemas["load_balancer"]): string {
  const differ = Object.entries({
    name: spec.name !== undefined && spec.name !== lb.name ? spec.name : undefined,
    location: spec.location !== undefined && spec.location !== lb.location?.name ? spec.location : undefined,
    "network-zone": spec.networkZone !== undefined && spec.networkZone !== lb.location?.network_zone
      ? spec.networkZone
      : undefined,
    type: spec.type !== undefined && spec.type !== lb.load_balancer_type?.name ? spec.type : undefined,
    "algorithm-type": spec.algorithm !== undefined && spec.algorithm !== lb.algorithm?.type
      ? spec.algorithm
      : undefined,
    "disable-public-network": spec.disablePublicNetwork !== undefined &&
        spec.disablePublicNetwork === lb.public_net?.enabled
      ? spec.disablePublicNetwork
      : undefined,
    "protection-delete": spec.protectDelete !== undefined && spec.protectDelete !== lb.protection?.delete
      ? spec.protectDelete
      : undefined,
  }).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  return differ.length ? differ.join(", ") : wholeSettingsNamed(spec);
}

// Synchronous (node:crypto): WebCrypto's digest settled on a worker thread, so the order of a run's
// requests depended on the machine's timing (see record_seal.ts).
function sha256Hex(text: string): Promise<string> {
  return Promise.resolve(createHash("sha256").update(text).digest("hex"));
}

/** Port → the name of the Service that owns it, as the balancer's labels record it. */
export function portOwners(labels: Record<string, string> | undefined): Map<number, string> {
  const owners = new Map<number, string>();
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (!key.startsWith(SHARE_PORT_LABEL_PREFIX)) continue;
    const port = Number(key.slice(SHARE_PORT_LABEL_PREFIX.length));
    if (Number.isSafeInteger(port) && port > 0) owners.set(port, value);
  }
  return owners;
}

/** The label recording that `port` belongs to a Service. */
export function portLabel(port: number): string {
  return `${SHARE_PORT_LABEL_PREFIX}${port}`;
}

/** The labels a new shared balancer is made with (the creator's ports claimed). */
export function sharedLabels(
  user: Record<string, string>,
  owner: { clusterId: string; namespace: string; key: string; digest: string; name: string },
  ports: number[],
): Record<string, string> {
  const labels: Record<string, string> = {
    ...user,
    [CLUSTER_ID_LABEL]: owner.clusterId,
    [SERVICE_NAMESPACE_LABEL]: owner.namespace,
    [SHARE_LABEL]: owner.key,
    [SHARE_SETTINGS_LABEL]: owner.digest,
  };
  for (const port of ports) labels[portLabel(port)] = owner.name;
  return labels;
}

/** Why a Service cannot join: a port another member owns. */
export interface PortTaken {
  port: number;
  owner: string;
}

/** The writes of a join, in order: claim (labels), actions, then drop claims no longer wanted. */
export interface JoinPlan {
  /** Ports another member owns: the join is refused and nothing is written. */
  taken: PortTaken[];
  /** The labels with this Service's ports claimed, when they change. */
  claim?: Record<string, string>;
  actions: LbAction[];
  /** The labels without the claims of ports this Service gave up, when they change. */
  release?: Record<string, string>;
}

/**
 * What `me` (a Service name) serving `desired` on `lb` takes: its ports added or updated, ports it
 * owned and no longer serves removed, ports without an owner (added by hand) removed, this cluster's
 * label-selector target added when missing.
 */
export function planJoin(
  lb: LB,
  me: string,
  desired: DesiredService[],
  target: { selector: string; usePrivateIp: boolean },
): JoinPlan {
  const owners = portOwners(lb.labels);
  const wanted = new Set(desired.map((d) => d.listen_port));
  const taken = desired
    .filter((d) => owners.has(d.listen_port) && owners.get(d.listen_port) !== me)
    .map((d) => ({ port: d.listen_port, owner: owners.get(d.listen_port)! }));
  if (taken.length) return { taken, actions: [] };
  const claimed = { ...lb.labels };
  for (const port of wanted) claimed[portLabel(port)] = me;
  const actions: LbAction[] = [];
  for (const actual of lb.services) {
    const owner = owners.get(actual.listen_port);
    if (wanted.has(actual.listen_port)) continue;
    if (owner === me || owner === undefined) {
      actions.push({ kind: "delete_service", listenPort: actual.listen_port });
    }
  }
  for (const want of desired) {
    const actual = lb.services.find((s) => s.listen_port === want.listen_port);
    if (!actual) actions.push({ kind: "add_service", service: want });
    else if (serviceDiffers(want, actual)) actions.push({ kind: "update_service", service: want });
  }
  // The cluster's target, as on any label-selector balancer the CCM made (its private-IP flag too).
  actions.push(...planLabelTarget(lb, target.selector, target.usePrivateIp));
  const released = { ...claimed };
  for (const [port, owner] of owners) if (owner === me && !wanted.has(port)) delete released[portLabel(port)];
  return {
    taken: [],
    claim: sameLabels(claimed, lb.labels) ? undefined : claimed,
    actions,
    release: sameLabels(released, claimed) ? undefined : released,
  };
}

/** The writes of a leave: the balancer goes when no other member is left, else `me`'s ports, then its claims. */
export function planLeave(
  lb: LB,
  me: string,
): { mine: boolean; deleteBalancer: boolean; actions: LbAction[]; labels?: Record<string, string> } {
  const owners = portOwners(lb.labels);
  const mine = [...owners].filter(([, owner]) => owner === me).map(([port]) => port);
  const others = [...owners.values()].some((owner) => owner !== me);
  if (!mine.length) return { mine: false, deleteBalancer: false, actions: [] };
  if (!others) return { mine: true, deleteBalancer: true, actions: [] };
  const labels = { ...lb.labels };
  for (const port of mine) delete labels[portLabel(port)];
  return {
    mine: true,
    deleteBalancer: false,
    actions: lb.services
      .filter((s) => mine.includes(s.listen_port))
      .map((s) => ({ kind: "delete_service", listenPort: s.listen_port })),
    labels,
  };
}

/** The other members' names (sorted), as the balancer's labels record them. */
export function otherMembers(lb: LB, me: string): string[] {
  return [...new Set([...portOwners(lb.labels).values()].filter((n) => n !== me))].sort();
}

function sameLabels(a: Record<string, string>, b: Record<string, string> | undefined): boolean {
  const bb = b ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(bb)]);
  return [...keys].every((k) => a[k] === bb[k]);
}
