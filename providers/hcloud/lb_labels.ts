/**
 * The labels that tie a Hetzner load balancer to its Service and to the cluster that made it.
 *
 * @module
 */

/** The label that ties a load balancer to its Service (the official CCM's). */
export const SERVICE_UID_LABEL = "hcloud-ccm/service-uid";
/** The label with the creating cluster's identity (the kube-system namespace UID). */
export const CLUSTER_ID_LABEL = "deno-ccm/cluster-id";
