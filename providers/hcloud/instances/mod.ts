/**
 * The instances room: Nodes as Hetzner Cloud servers and Robot machines (provider IDs, addresses,
 * labels, existence and shutdown), with the Node annotations that override addresses.
 *
 * @module
 */
export { HcloudInstances } from "./instances.ts";
export {
  DEFAULT_SERVER_LABEL_PREFIX,
  invalidServerLabelPattern,
  parseServerTaintPatterns,
  type ServerTaintPattern,
} from "./node_labels.ts";
export type { AddressFamily } from "./address_family.ts";
