/**
 * Balancers a Service does not own alone: shared ones (`load-balancer-share`, the Services of one
 * namespace on one balancer, ownership recorded on the balancer) and co-managed ones (`attach-to`, a
 * balancer made outside Kubernetes where the Service owns only its ports and the cluster's target).
 *
 * @module
 */
export { SHARED_STATE, sharedAlive, SharedBalancers } from "./shared.ts";
export { sharedName } from "./shared_record.ts";
export { CO_MANAGED_STATE, CoManagedBalancers, findCoManaged } from "./co_managed.ts";
export { SharingSync } from "./service_sync.ts";
