/**
 * The load balancers room: Services as Hetzner load balancers (annotations, the plan/execute diff,
 * lookup and ownership, certificates, targets, co-managed and shared balancers, drift repair and the
 * orphan sweep).
 *
 * @module
 */
export { POLICY_EXCEPTIONS } from "./admission_policy.ts";
export { policyTemplate } from "./admission_template.ts";
export { KNOWN_ANNOTATIONS, parseLoadBalancerSpec, PREFIX } from "./annotations.ts";
export { CO_MANAGED_STATE } from "./co_managed.ts";
export { SHARED_STATE } from "./shared.ts";
export { driftPageSize } from "./drift.ts";
export { HcloudLoadBalancers } from "./load_balancers.ts";
export { parseUserLabels } from "./user_labels.ts";
export type { LoadBalancerDefaults } from "./defaults.ts";
