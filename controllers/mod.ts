/**
 * The controllers this build provides, by upstream name.
 *
 * @module
 */
import type { ControllerName } from "../config/controllers_flag.ts";
import type { ControllerFactory } from "./manager.ts";
import { nodeController } from "./node.ts";
import { nodeLifecycleController } from "./node_lifecycle.ts";
import { routeController } from "./route.ts";
import { serviceController } from "./service.ts";
import { csrApproverController } from "./csr_approver.ts";
import { nodeIpamController } from "./node_ipam.ts";

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
export { CONFIRM_DELETION } from "./node_lifecycle.ts";
export {
  hasTaint,
  INFORMER_TRANSFORMS,
  isReady,
  PROVIDED_NODE_IP,
  SHUTDOWN_TAINT,
  trimNodeStatus,
  UNINITIALIZED_TAINT,
} from "./node_metadata.ts";
export { LB_FINALIZER } from "./service.ts";
export { ipamPlan } from "./node_ipam_plan.ts";
