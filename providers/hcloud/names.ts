/**
 * Every name the Hetzner provider reads or writes: annotation prefixes and annotations on Services
 * and Nodes, labels on Nodes, and labels on cloud objects. The official CCM's names come first; ours
 * (`deno-ccm/…`, `node.deno-ccm.io/…`, `service.deno-ccm.io/…`) are marked so. Who writes each one is
 * its threat model (docs/explanation/threat-model.md).
 *
 * @module
 */

/** Prefix of the Service annotations that configure a load balancer (the official CCM's). */
export const LB_ANNOTATION_PREFIX = "load-balancer.hetzner.cloud/";
/** Node annotation: an IPv6 address to report instead of the server's first (the official CCM's). */
export const EXTERNAL_IPV6_ANNOTATION = "instance.hetzner.cloud/external-ipv6";
/** Node label: `cloud` or `robot`, whichever API serves the Node's machine (the official CCM's). */
export const PROVIDED_BY_LABEL = "instance.hetzner.cloud/provided-by";
/** Node label on Robot (dedicated) servers (the official CCM's). */
export const IS_ROOT_SERVER_LABEL = "instance.hetzner.cloud/is-root-server";
/** Default prefix of the Node labels synced from server labels (`HCLOUD_INSTANCES_SERVER_LABEL_PREFIX`). */
export const DEFAULT_SERVER_LABEL_PREFIX = "server.hetzner.cloud";

/** Cloud label that ties a load balancer or certificate to its Service (the official CCM's). */
export const SERVICE_UID_LABEL = "hcloud-ccm/service-uid";
/** Cloud label with the creating cluster's identity, the kube-system namespace UID (ours). */
export const CLUSTER_ID_LABEL = "deno-ccm/cluster-id";
/** Cloud label: the namespace of the Service an object was made for (ours). */
export const SERVICE_NAMESPACE_LABEL = "deno-ccm/service-namespace";
/** Cloud label: the name of the Service an object was made for (ours). */
export const SERVICE_NAME_LABEL = "deno-ccm/service-name";
/** Cloud label an object's owner sets to let one namespace's Services use it (ours). */
export const CONSENT_LABEL = "deno-ccm/namespace";
/** Server label picked up by label-selector targets; its value is the cluster identity (ours). */
export const TARGET_LABEL = "deno-ccm/lb-target";

/** Node annotations that replace the Node's own address of that type (ours). */
export const ADDRESS_OVERRIDES = {
  InternalIP: "node.deno-ccm.io/internal-ip",
  ExternalIP: "node.deno-ccm.io/external-ip",
} as const;
/** Service annotation: labels of the owner's choice on the Service's balancer, `k=v,…` (ours). */
export const LB_LABELS_ANNOTATION = "service.deno-ccm.io/load-balancer-labels";
/** Service annotation: health-check kube-proxy's `/healthz` (port 10256) for `Cluster` traffic (ours). */
export const KUBE_PROXY_HEALTH_CHECK_ANNOTATION = "service.deno-ccm.io/health-check-kube-proxy";
/** Service annotation: the ingress lists the balancer's addresses of `spec.ipFamilies` only, in that order (ours). */
export const INGRESS_FAMILIES_ANNOTATION = "service.deno-ccm.io/ingress-follows-ip-families";
/** Service annotation: a NodePort Service opens its NodePorts in the cluster's firewall (ours; firewall/node_ports.ts). */
export const FIREWALL_NODEPORTS_ANNOTATION = "service.deno-ccm.io/firewall-open-nodeports";
/** Service annotation: the source CIDRs a NodePort Service opens its NodePorts to, `cidr,…` (ours; Kubernetes refuses `loadBalancerSourceRanges` on NodePort Services). */
export const FIREWALL_SOURCE_RANGES_ANNOTATION = "service.deno-ccm.io/firewall-source-ranges";
/** Ours: a `kubernetes.io/tls` Secret (in the Service's namespace) whose certificate https ports serve. */
export const TLS_SECRET_ANNOTATION = "service.deno-ccm.io/tls-secret";
/** The label a Secret needs before the CCM reads it: its owner's consent, and the watch's selector. */
export const TLS_SECRET_LABEL = "deno-ccm.io/load-balancer-tls";
/** Service annotation, written by the CCM: what the Service owns on a co-managed balancer (ours). */
export const CO_MANAGED_STATE = "service.deno-ccm.io/co-managed";
/** Service annotation: a key; Services of one namespace naming the same key share one balancer (ours). */
export const SHARE_ANNOTATION = "service.deno-ccm.io/load-balancer-share";
/** Service annotation, written by the CCM: the share key of the balancer the Service serves on (ours). */
export const SHARED_STATE = "service.deno-ccm.io/shared-load-balancer";
/** Cloud label on a certificate uploaded from a TLS Secret: a hash of `namespace/name` (ours). */
export const TLS_REF_LABEL = "deno-ccm/tls-secret";
/** Cloud label on a shared balancer: the share key its Services name (ours). */
export const SHARE_LABEL = "deno-ccm/share";
/** Cloud label on a shared balancer: a digest of the settings of the whole balancer (ours). */
export const SHARE_SETTINGS_LABEL = "deno-ccm/share-settings";
/** Cloud label prefix on a shared balancer: `deno-ccm/port-<port>` names the Service owning that port (ours). */
export const SHARE_PORT_LABEL_PREFIX = "deno-ccm/port-";
