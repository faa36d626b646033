/**
 * The Service, read: annotations and their rules, per-port settings, user labels, the share key, the
 * operator's defaults, and the chart's admission policy generated from the same rules (spec/admission/).
 * It imports nothing of the planning around it.
 *
 * @module
 */
export { POLICY_EXCEPTIONS, policyTemplate } from "./admission/mod.ts";
export {
  defaultLoadBalancerName,
  earliestStage,
  HccmStage,
  type HealthCheckSpec,
  KNOWN_ANNOTATIONS,
  type LoadBalancerSpec,
  parseLoadBalancerSpec,
  PREFIX,
} from "./annotations.ts";
export {
  type AnnotationReference,
  annotationsPage,
  OWN_ANNOTATION_REFERENCE,
  type Writer,
} from "./annotation_reference.ts";
export { type ValueKind, valueKind } from "./annotation_rules.ts";
export { type LoadBalancerDefaults } from "./defaults.ts";
export { type PortSettings, redirectPort, tlsSecretNames } from "./port_settings.ts";
export { shareErrors } from "./share_key.ts";
export { parseUserLabels } from "./user_labels.ts";
