/**
 * The provider's capabilities as the controllers call them: one explicit adapter per capability,
 * written out member by member. Each call is counted under the official CCM's operation name where it
 * has one (`cloud_controller_manager_operations_total`) and its failures are mapped for the reconcile
 * contract (retry_errors.ts: a `locked` waits 2 s, a Retry-After its time, a limit 10 minutes). Nothing
 * is patched onto an object at run time, and a member a capability gains must be added here: the
 * adapters are typed to the contract, so the compiler says so.
 *
 * @module
 */
import type {
  Instances,
  LoadBalancerFirewall,
  LoadBalancerInventory,
  LoadBalancerNodeTargets,
  LoadBalancers,
  Routes,
} from "../provider.ts";
import type { Registry } from "../../lib/metrics.ts";
import { OPERATIONS } from "./op_metrics.ts";
import { toRetryable } from "./retry_errors.ts";

/** Counts an operation by its official name (nothing without a registry). */
type Count = (op: string) => void;

/** `cloud_controller_manager_operations_total` in `registry`, as a counting function. */
export function operationCounter(registry?: Registry): Count {
  if (!registry) return () => {};
  const counter = registry.counter(
    "cloud_controller_manager_operations_total",
    "Cloud provider operations called, by the official CCM's operation name.",
  );
  return (op) => counter.inc({ op });
}

/** `fn` with its rejections passed through {@link toRetryable}, counted as `op` first when given. */
function call<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  count?: () => void,
): (...args: A) => Promise<R> {
  return async (...args: A) => {
    count?.();
    try {
      return await fn(...args);
    } catch (err) {
      throw toRetryable(err);
    }
  };
}

/** Instances, counted and mapped. */
export function adaptInstances(inner: Instances, count: Count): Instances {
  const ops = OPERATIONS.instances;
  const record = inner.machineRecord;
  return {
    instanceExists: call((n, s) => inner.instanceExists(n, s), () => count(ops.instanceExists)),
    instanceShutdown: call((n, s) => inner.instanceShutdown(n, s), () => count(ops.instanceShutdown)),
    instanceMetadata: call((n, p, s) => inner.instanceMetadata(n, p, s), () => count(ops.instanceMetadata)),
    ...(record ? { machineRecord: call((n, p, s) => record.call(inner, n, p, s)) } : {}),
  };
}

/** Routes, counted and mapped. */
export function adaptRoutes(inner: Routes, count: Count): Routes {
  const ops = OPERATIONS.routes;
  const unroutable = inner.unroutable;
  return {
    listRoutes: call((c, s) => inner.listRoutes(c, s), () => count(ops.listRoutes)),
    createRoute: call((c, h, r, s) => inner.createRoute(c, h, r, s), () => count(ops.createRoute)),
    deleteRoute: call((c, r, s) => inner.deleteRoute(c, r, s), () => count(ops.deleteRoute)),
    ...(unroutable ? { unroutable: (node) => unroutable.call(inner, node) } : {}),
    ...(inner.maxRoutes !== undefined ? { maxRoutes: inner.maxRoutes } : {}),
  };
}

/** Load balancers and their parts (node targets, inventory, TLS Secrets, firewall), counted and mapped. */
export function adaptLoadBalancers(inner: LoadBalancers, count: Count): LoadBalancers {
  const ops = OPERATIONS.loadBalancers;
  const get = inner.getLoadBalancer;
  const prefetch = inner.prefetch;
  return {
    ...(get
      ? { getLoadBalancer: call((c, svc, s) => get.call(inner, c, svc, s), () => count(ops.getLoadBalancer)) }
      : {}),
    ...(prefetch ? { prefetch: call((svcs, s) => prefetch.call(inner, svcs, s)) } : {}),
    getLoadBalancerName: (c, svc) => inner.getLoadBalancerName(c, svc),
    ensureLoadBalancer: call(
      (sync, s) => inner.ensureLoadBalancer(sync, s),
      () => count(ops.ensureLoadBalancer),
    ),
    updateLoadBalancer: call(
      (sync, s) => inner.updateLoadBalancer(sync, s),
      () => count(ops.updateLoadBalancer),
    ),
    ensureLoadBalancerDeleted: call(
      (c, svc, s) => inner.ensureLoadBalancerDeleted(c, svc, s),
      () => count(ops.ensureLoadBalancerDeleted),
    ),
    ...(inner.nodeTargets ? { nodeTargets: adaptNodeTargets(inner.nodeTargets) } : {}),
    ...(inner.inventory ? { inventory: adaptInventory(inner.inventory) } : {}),
    ...(inner.tlsSecrets ? { tlsSecrets: inner.tlsSecrets } : {}),
    ...(inner.firewall ? { firewall: adaptFirewall(inner.firewall) } : {}),
  };
}

/** Node targets: the label sync mapped; the selection is local and cannot fail on the cloud. */
function adaptNodeTargets(inner: LoadBalancerNodeTargets): LoadBalancerNodeTargets {
  const drain = inner.drainPeriodMs;
  return {
    selected: (svc, nodes) => inner.selected(svc, nodes),
    sync: call((c, nodes, s) => inner.sync(c, nodes, s)),
    ...(drain ? { drainPeriodMs: () => drain.call(inner) } : {}),
  };
}

/** The inventory (owners, drift repair, the orphan sweep), mapped. */
export function adaptInventory(inner: LoadBalancerInventory): LoadBalancerInventory {
  return {
    owners: call((expected, s) => inner.owners(expected, s)),
    drift: call((s) => inner.drift(s)),
    sweepOrphans: call((live, s) => inner.sweepOrphans(live, s)),
  };
}

/** The firewall keeper, mapped. */
export function adaptFirewall(inner: LoadBalancerFirewall): LoadBalancerFirewall {
  const { watch, concerns } = inner;
  return {
    sync: call((s, options) => inner.sync(s, options)),
    ...(watch ? { watch: (poke) => watch.call(inner, poke) } : {}),
    ...(concerns ? { concerns: (svc) => concerns.call(inner, svc) } : {}),
  };
}
