/**
 * The routes room: pod CIDR routes in the cluster's Hetzner network.
 *
 * @module
 */
export { HcloudRoutes } from "./routes.ts";
