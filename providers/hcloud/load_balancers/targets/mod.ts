/**
 * What a Service's balancer sends to: this cluster's label selector, servers one by one (node
 * selectors), Robot Nodes' IPs, and how long a leaving Node stays a target while it drains.
 *
 * @module
 */
export { drainPeriodMs } from "./draining.ts";
export { type RobotTargetContext, robotTargetIps } from "./robot_targets.ts";
export { LbTargets, selectedNodes, warnTooManyTargets } from "./targets.ts";
