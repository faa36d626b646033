/**
 * The cloud node controller's room: Nodes initialized from the cloud and their addresses refreshed
 * (node.ts), server labels and taints copied onto Nodes, addresses shared between machines (found in an
 * index of Nodes by server and address, node_index.ts).
 *
 * @module
 */
export { nodeController, type NodeFlags } from "./node.ts";
