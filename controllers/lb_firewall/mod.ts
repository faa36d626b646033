/**
 * The firewall follower's room: the cloud firewall's rules kept in step with the cluster's balancers
 * (follower.ts). The Service controller runs it beside its own loops and tells it what changed.
 *
 * @module
 */
export { BURST, FirewallFollower, MIN_INTERVAL_MS } from "./follower.ts";
