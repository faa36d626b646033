/**
 * The load balancers room: Services as Hetzner load balancers (the plan/execute diff, lookup and
 * ownership, certificates, targets, co-managed and shared balancers, drift repair and the orphan sweep);
 * reading the Service is the spec/ room (with the chart's admission policy in spec/admission/).
 *
 * @module
 */
export {
  KNOWN_ANNOTATIONS,
  type LoadBalancerDefaults,
  parseLoadBalancerSpec,
  parseUserLabels,
  POLICY_EXCEPTIONS,
  policyTemplate,
  PREFIX,
} from "./spec/mod.ts";
export { annotationsPage, OWN_ANNOTATION_REFERENCE, valueKind } from "./spec/mod.ts";
export { CO_MANAGED_STATE } from "./sharing/mod.ts";
export { SHARED_STATE } from "./sharing/mod.ts";
export { HcloudLoadBalancers } from "./load_balancers.ts";
export { type ReadService, ServiceReader, type ServiceRequest } from "./core/request.ts";
export type { ClusterFacts } from "./core/cluster_facts.ts";
export type { DesiredService } from "./core/desired.ts";
