/**
 * The route controller's room: one route per Node and pod CIDR, kept in step with the Nodes
 * (route.ts), within the room the network has for routes (route_room.ts), with each Node's
 * `NetworkUnavailable` condition (network_condition.ts).
 *
 * @module
 */
export { routeController, type RouteFlags } from "./route.ts";
