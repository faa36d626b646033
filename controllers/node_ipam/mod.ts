/**
 * The node IPAM controller's room: pod CIDRs for Nodes from `--cluster-cidr` and each machine's IPv6
 * range (node_ipam.ts), the startup check of its flags (node_ipam_plan.ts), the ranges in use and the
 * checks of ranges a Node already has.
 *
 * @module
 */
export { nodeIpamController, type NodeIpamFlags } from "./node_ipam.ts";
export type { Cidr } from "../../lib/cidr.ts";
export { type FamilyPlan, type IpamFlags, ipamPlan } from "./node_ipam_plan.ts";
