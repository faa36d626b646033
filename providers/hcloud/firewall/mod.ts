/**
 * The firewall room: the Cloud Firewall whose rules follow this cluster's balancers and the NodePort
 * Services allowed to open theirs (firewall.ts), the rules themselves (rules.ts) and what NodePort
 * Services ask for (node_ports.ts).
 *
 * @module
 */
export {
  type CoManagedPorts,
  type FirewallSyncResult,
  HcloudFirewall,
  type NodePortSource,
} from "./firewall.ts";
export { asksForNodePorts, type NodePortOpening, nodePortOpenings, type Refusal } from "./node_ports.ts";
