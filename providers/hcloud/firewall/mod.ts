/**
 * The firewall room: the Cloud Firewall whose rules follow this cluster's balancers (firewall.ts),
 * and the rules themselves (rules.ts).
 *
 * @module
 */
export { HcloudFirewall } from "./firewall.ts";
