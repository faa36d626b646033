/**
 * The chart's admission policy (a ValidatingAdmissionPolicy in CEL), generated from the annotation
 * rules by `deno task manifests`; only hack/ and the tests use it.
 *
 * @module
 */
export { POLICY_EXCEPTIONS } from "./admission_policy.ts";
export { policyTemplate } from "./admission_template.ts";
