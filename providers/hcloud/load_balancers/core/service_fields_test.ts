import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../../../testing/assert.ts";
import { checkServiceFields, SOURCE_RANGES_ANNOTATION } from "./service_fields.ts";
import { parseLoadBalancerSpec } from "../spec/mod.ts";

const DEFAULTS = { enabled: true, disablePrivateIngress: false, usePrivateIp: false, disableIpv6: false };
const check = (spec: Service["spec"], annotations: Record<string, string> = {}) => {
  const service: Service = { metadata: { name: "s", annotations }, spec };
  return checkServiceFields(service, parseLoadBalancerSpec(service, DEFAULTS).spec, 1);
};

Deno.test("service fields: source ranges from the field, else the annotation (probe N9), refuse a public balancer", () => {
  const field = check({ loadBalancerSourceRanges: ["192.0.2.0/24"] });
  assertEquals(field.warnings.map((w) => w.reason), ["UnsupportedLoadBalancerSourceRanges"]);
  assertEquals(field.refuseCreate?.startsWith("spec.loadBalancerSourceRanges [192.0.2.0/24]"), true);
  const annotated = check({}, { [SOURCE_RANGES_ANNOTATION]: "192.0.2.0/24, 198.51.100.0/24" });
  assertEquals(
    annotated.refuseCreate?.startsWith(
      `annotation ${SOURCE_RANGES_ANNOTATION} [192.0.2.0/24, 198.51.100.0/24]`,
    ),
    true,
    annotated.refuseCreate,
  );
  // The field wins when both are set (as upstream); open ranges restrict nothing.
  assertEquals(
    check({ loadBalancerSourceRanges: ["0.0.0.0/0"] }, { [SOURCE_RANGES_ANNOTATION]: "10.0.0.0/8" }),
    {
      warnings: [],
      refuseCreate: undefined,
    },
  );
  // A private balancer is made, with the warning.
  const priv = check({}, {
    [SOURCE_RANGES_ANNOTATION]: "10.0.0.0/8",
    "load-balancer.hetzner.cloud/disable-public-network": "true",
  });
  assertEquals([priv.warnings.length, priv.refuseCreate], [1, undefined]);
});
