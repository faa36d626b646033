/**
 * The cloud node lifecycle controller's room: NotReady Nodes whose machine is gone are deleted, those
 * whose machine is off are tainted (node_lifecycle.ts); many gone at once are believed only when the
 * cloud answers plausibly (deletion_breaker.ts).
 *
 * @module
 */
export { CONFIRM_DELETION, type LifecycleFlags, nodeLifecycleController } from "./node_lifecycle.ts";
