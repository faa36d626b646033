/**
 * `cloud_controller_manager_operations_total{op}`, the official CCM's count of cloud-provider
 * operations, with its operation names, so its dashboards keep working.
 *
 * @module
 */
import type { Registry } from "../../lib/metrics.ts";

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

/** Makes each named method of `target` count its calls under its operation name. */
export function countOperations<T extends object>(
  target: T,
  names: Record<string, string>,
  registry?: Registry,
): T {
  if (!registry) return target;
  const counter = registry.counter(
    "cloud_controller_manager_operations_total",
    "Cloud provider operations called, by the official CCM's operation name.",
  );
  const methods = target as Record<string, unknown>;
  for (const [method, op] of Object.entries(names)) {
    const original = methods[method];
    if (typeof original !== "function") continue;
    methods[method] = (...args: unknown[]) => {
      counter.inc({ op });
      return original.apply(target, args);
    };
  }
  return target;
}
