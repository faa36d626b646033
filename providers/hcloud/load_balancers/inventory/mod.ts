/**
 * This cluster's balancers as a whole, from one list by the cluster label: whose Services still have
 * one, drift from what each last sync asked, the targets' health, and the sweep of orphans.
 *
 * @module
 */
export { ClusterInventory, type InventorySources } from "./cluster_inventory.ts";
export { type DriftRecord } from "./drift.ts";
export { type BalancerHealth, type TargetHealth, TargetHealthGauge } from "./target_health.ts";
export { BalancerTraffic, TRAFFIC_BALANCERS_PER_PASS } from "./traffic.ts";
