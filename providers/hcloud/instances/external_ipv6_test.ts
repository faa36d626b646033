import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals, assertThrows } from "../../../testing/assert.ts";
import { applyExternalIpv6, EXTERNAL_IPV6_ANNOTATION, isGlobalUnicastIpv6 } from "./external_ipv6.ts";
import { warningsOf } from "../../errors.ts";

const node = (value?: string): Node => ({
  metadata: {
    name: "n",
    annotations: value === undefined ? {} : { [EXTERNAL_IPV6_ANNOTATION]: value } as Record<string, string>,
  },
});
const derived = [
  { type: "Hostname", address: "n" },
  { type: "ExternalIP", address: "203.0.113.1" },
  { type: "ExternalIP", address: "2001:db8:1::1" },
  { type: "InternalIP", address: "10.0.0.2" },
];

Deno.test("external-ipv6: replaces the derived ::1 in place; absent changes nothing", () => {
  assertEquals(applyExternalIpv6(node(), derived, "dualstack", "2001:db8:1::1").addresses, derived);
  const { addresses, warnings } = applyExternalIpv6(
    node("2001:db8:1::5"),
    derived,
    "dualstack",
    "2001:db8:1::1",
  );
  assertEquals(addresses.map((a) => a.address), ["n", "203.0.113.1", "2001:db8:1::5", "10.0.0.2"]);
  assertEquals(warnings, []);
  // A server without an IPv6 network gets the annotated address before the InternalIP.
  const noV6 = derived.filter((a) => !a.address.includes(":"));
  assertEquals(
    applyExternalIpv6(node("2a01:4f8::7"), noV6, "ipv6", undefined).addresses.map((a) => a.address),
    ["n", "203.0.113.1", "2a01:4f8::7", "10.0.0.2"],
  );
});

Deno.test("external-ipv6: ignored with IgnoredExternalIPv6 under ipv4; invalid values throw InvalidExternalIPv6", () => {
  const ignored = applyExternalIpv6(node("2001:db8:1::5"), derived, "ipv4", "2001:db8:1::1");
  assertEquals(ignored.addresses, derived);
  assertEquals(ignored.warnings.map((w) => w.reason), ["IgnoredExternalIPv6"]);
  for (const bad of ["fe80::1", "::1", "ff02::1", "203.0.113.9", "not-an-ip", "::"]) {
    const err = assertThrows(
      () => applyExternalIpv6(node(bad), derived, "dualstack", "2001:db8:1::1"),
      Error,
    );
    assertEquals(warningsOf(err).map((w) => w.reason), ["InvalidExternalIPv6"], bad);
  }
  assertEquals(isGlobalUnicastIpv6("fd00::1"), true); // ULA counts, as in Go
});
