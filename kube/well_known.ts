/**
 * Well-known Kubernetes names a cloud controller reads or writes, in one place (upstream
 * `k8s.io/cloud-provider/api` and `k8s.io/api/core/v1` constants).
 *
 * @module
 */

/** Taint the kubelet sets with `--cloud-provider=external` until the CCM initializes the Node. */
export const UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized";
/** Taint of Nodes whose machine is powered off. */
export const SHUTDOWN_TAINT = "node.cloudprovider.kubernetes.io/shutdown";
/** The kubelet's `--node-ip`, possibly a comma-separated dual-stack pair. */
export const PROVIDED_NODE_IP = "alpha.kubernetes.io/provided-node-ip";
