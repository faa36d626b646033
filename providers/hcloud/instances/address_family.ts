/**
 * `HCLOUD_INSTANCES_ADDRESS_FAMILY`: which address families Nodes get (a type of this room, so its
 * files never import the configuration reader).
 *
 * @module
 */

/** `HCLOUD_INSTANCES_ADDRESS_FAMILY`. */
export type AddressFamily = "ipv4" | "ipv6" | "dualstack";
