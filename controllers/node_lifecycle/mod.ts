/**
 * The cloud node lifecycle controller's room: NotReady Nodes whose machine is gone are deleted, those
 * whose machine is off are tainted (node_lifecycle.ts).
 *
 * @module
 */
export { CONFIRM_DELETION, type LifecycleFlags, nodeLifecycleController } from "./node_lifecycle.ts";
