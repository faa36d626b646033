/**
 * The servers room: one cached snapshot of the project's servers (by ID, name and IP) kept fresh from
 * the action log, and the labeler that keeps the load-balancer target label on this cluster's servers.
 *
 * @module
 */
export {
  type Freshness,
  ipv6HostOne,
  type LoggedNews,
  type RefreshMode,
  ServerCache,
  type ServerSnapshot,
} from "./cache.ts";
export { type ResolvedBalancer, ServerLabeler, TARGET_LABEL } from "./labeler.ts";
export { buildSnapshot } from "./snapshot.ts";
