/**
 * The cloud node controller's room: Nodes initialized from the cloud and their addresses refreshed
 * (node.ts), server labels and taints copied onto Nodes, addresses shared between machines.
 *
 * @module
 */
export { nodeController, type NodeFlags } from "./node.ts";
