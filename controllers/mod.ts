/**
 * The controllers this build provides, by upstream name.
 *
 * @module
 */
import type { ControllerName } from "../config/controllers_flag.ts";
import type { ControllerFactory } from "./manager.ts";
import { nodeController } from "./node/mod.ts";
import { nodeLifecycleController } from "./node_lifecycle/mod.ts";
import { routeController } from "./route/mod.ts";
import { serviceController } from "./service/mod.ts";
import { csrApproverController } from "./csr_approver/mod.ts";
import { nodeIpamController } from "./node_ipam/mod.ts";

/** Factories of the implemented controllers; a name missing here is skipped with a warning. */
export const CONTROLLER_FACTORIES: Partial<Record<ControllerName, ControllerFactory>> = {
  "cloud-node-controller": nodeController,
  "cloud-node-lifecycle-controller": nodeLifecycleController,
  "service-lb-controller": serviceController,
  "node-route-controller": routeController,
  "kubelet-serving-csr-approver": csrApproverController,
  "node-ipam-controller": nodeIpamController,
};

export {
  type Controller,
  type ControllerContext,
  type ControllerFactory,
  makeRecorderFactory,
  runControllers,
} from "./manager.ts";
export { CONFIRM_DELETION } from "./node_lifecycle/mod.ts";
export {
  hasTaint,
  INFORMER_TRANSFORMS,
  isReady,
  PROVIDED_NODE_IP,
  SHUTDOWN_TAINT,
  trimNodeStatus,
  UNINITIALIZED_TAINT,
} from "./node_metadata.ts";
export { LB_FINALIZER, NODE_CHANGE_REFILL_MS } from "./service/mod.ts";
export { type FamilyPlan, type IpamFlags, ipamPlan } from "./node_ipam/mod.ts";
export type { ControllerName } from "../config/controllers_flag.ts";
