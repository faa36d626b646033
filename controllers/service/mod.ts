/**
 * The service controller's room: a load balancer per Service of type LoadBalancer (controller.ts), what
 * it knows of the node set and draining Nodes, its writes and status, the TLS Secrets it watches,
 * and the node sync; it runs the firewall follower (controllers/lb_firewall/) and the balancers' housekeeping (controllers/lb_housekeeping/) beside its loops.
 *
 * @module
 */
export { LB_FINALIZER, serviceController, type ServiceFlags } from "./controller.ts";
export type { HousekeepingFlags } from "../lb_housekeeping/mod.ts";
export { eligibleNode } from "./nodes.ts";
export { NODE_CHANGE_REFILL_MS } from "./node_change_guard.ts";
