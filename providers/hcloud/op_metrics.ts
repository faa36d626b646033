/**
 * `cloud_controller_manager_operations_total{op}`, the official CCM's count of cloud-provider
 * operations, with its operation names, so its dashboards keep working.
 *
 * @module
 */

/** Our method → the official CCM's operation name, per provider part. */
export const OPERATIONS = {
  instances: {
    instanceExists: "hcloud/instancesv2.InstanceExists",
    instanceShutdown: "hcloud/instancesv2.InstanceShutdown",
    instanceMetadata: "hcloud/instancesv2.InstanceMetadata",
  },
  loadBalancers: {
    getLoadBalancer: "hcloud/loadBalancers.GetLoadBalancer",
    ensureLoadBalancer: "hcloud/loadBalancers.EnsureLoadBalancer",
    updateLoadBalancer: "hcloud/loadBalancers.UpdateLoadBalancer",
    ensureLoadBalancerDeleted: "hcloud/loadBalancers.EnsureLoadBalancerDeleted",
  },
  routes: {
    listRoutes: "hcloud/ListRoutes",
    createRoute: "hcloud/CreateRoute",
    deleteRoute: "hcloud/DeleteRoute",
  },
} as const;
