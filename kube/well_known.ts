/**
 * Every Kubernetes name the controllers read or write, in one place: upstream's
 * (`k8s.io/cloud-provider/api` and `k8s.io/api/core/v1` constants) first, then ours
 * (`node.deno-ccm.io/…`, `service.deno-ccm.io/…`). Names a provider owns live with it (the Hetzner
 * provider's: `providers/hcloud/names.ts`).
 *
 * @module
 */

/** Taint the kubelet sets with `--cloud-provider=external` until the CCM initializes the Node. */
export const UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized";
/** Taint of Nodes whose machine is powered off. */
export const SHUTDOWN_TAINT = "node.cloudprovider.kubernetes.io/shutdown";
/** The kubelet's `--node-ip`, possibly a comma-separated dual-stack pair. */
export const PROVIDED_NODE_IP = "alpha.kubernetes.io/provided-node-ip";
/** Finalizer that holds a LoadBalancer Service until its balancer is deleted. */
export const LB_FINALIZER = "service.kubernetes.io/load-balancer-cleanup";
/** Node label that keeps the Node out of every load balancer's targets. */
export const EXCLUDE_FROM_LB_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
/** The Node labels set at initialization, each with its deprecated beta twin. */
export const INSTANCE_TYPE_LABELS = [
  "node.kubernetes.io/instance-type",
  "beta.kubernetes.io/instance-type",
] as const;
/** See {@link INSTANCE_TYPE_LABELS}. */
export const ZONE_LABELS = ["topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"] as const;
/** See {@link INSTANCE_TYPE_LABELS}. */
export const REGION_LABELS = [
  "topology.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/region",
] as const;

/** Signer of kubelet serving certificates (CSRs the kubelet makes for its own HTTPS endpoint). */
export const KUBELET_SERVING_SIGNER = "kubernetes.io/kubelet-serving";
/** Prefix of a kubelet's user name (`system:node:<node name>`). */
export const NODE_USER_PREFIX = "system:node:";
/** The group every kubelet is in. */
export const NODES_GROUP = "system:nodes";

/**
 * Ours: `node.deno-ccm.io/managed=false` (Go's false) marks a Node that is not the cloud's (a
 * home-lab machine, another cloud's, a vSwitch box): no controller looks it up, initializes, deletes
 * or routes it, and no balancer targets it. Azure's `kubernetes.azure.com/managed=false` is the model.
 */
export const MANAGED_LABEL = "node.deno-ccm.io/managed";
/** Ours: an owner's confirmation that a held Node may be deleted (node deletion breaker). */
export const CONFIRM_DELETION = "node.deno-ccm.io/confirm-deletion";
/** Ours: the provider labels last synced onto the Node, so removed ones can be taken off. */
export const SYNCED_LABELS_ANNOTATION = "node.deno-ccm.io/synced-labels";
/** Ours: the keys of the provider taints last synced onto the Node, so removed ones can be taken off. */
export const SYNCED_TAINTS_ANNOTATION = "node.deno-ccm.io/synced-taints";
/** Ours: an owner's confirmation that a Service's balancer may be recreated while recreations are held. */
export const CONFIRM_RECREATE = "service.deno-ccm.io/confirm-recreate";
