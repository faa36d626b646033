import { assert, assertEquals } from "../../../../testing/assert.ts";
import { earliestStage, HccmStage, parseLoadBalancerSpec, PREFIX } from "./annotations.ts";
import type { LoadBalancerDefaults } from "./defaults.ts";

const DEFAULTS: LoadBalancerDefaults = {
  enabled: true,
  disablePrivateIngress: false,
  usePrivateIp: false,
  disableIpv6: false,
};
const parse = (annotations: Record<string, string>, defaults = DEFAULTS) =>
  parseLoadBalancerSpec({
    metadata: {
      uid: "u",
      annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [PREFIX + k, v])),
    },
  }, defaults);

Deno.test("LB annotations: every invalid value is reported with the annotation and the value", () => {
  const table: [string, string, string][] = [
    ["algorithm-type", "random", "is not one of round_robin, least_connections"],
    ["disable-public-network", "maybe", "is not a boolean"],
    ["ipv6-disabled", "2", "is not a boolean"],
    ["disable-private-ingress", "no", "is not a boolean"],
    ["use-private-ip", "yes", "is not a boolean"],
    ["private-ipv4", "10.0.0.300", "is not an IPv4 address"],
    ["private-ipv4", "fd00::1", "is not an IPv4 address"],
    ["private-subnet-ip-range", "10.0.0.0", "is not a CIDR range"],
    ["protocol", "udp", "is not one of tcp, http, https"],
    ["uses-proxyprotocol", "on", "is not a boolean"],
    ["node-selector", "a b", "is not a label selector"],
    ["http-cookie-lifetime", "forever", "is not a duration"],
    ["http-timeout-idle", "10s", "must be between 30s and 300s"],
    ["certificate-type", "stolen", "is not one of uploaded, managed"],
    ["http-redirect-http", "y", "is not a boolean"],
    ["http-sticky-sessions", "n", "is not a boolean"],
    ["health-check-protocol", "icmp", "is not one of tcp, http, https"],
    ["health-check-port", "70000", "is not an integer between 1 and 65535"],
    ["health-check-port", "http", "is not an integer between 1 and 65535"],
    ["health-check-interval", "soon", "is not a duration"],
    ["health-check-interval", "2s", "must be between 3s and 60s"],
    ["health-check-timeout", "0s", "must be between 1s and 60s"],
    ["health-check-retries", "9", "is not an integer between 0 and 5"],
    ["health-check-http-validate-certificate", "sure", "is not a boolean"],
    ["health-check-http-status-codes", "600", "is not a status code"],
    ["protection-delete", "please", "is not a boolean"],
    ["location", "Falkenstein 1", "is not a valid location name"],
    ["network-zone", "eu central", "is not a valid network zone"],
    ["type", "LB 11", "is not a valid load balancer type"],
    ["name", "-bad-", "is not a valid load balancer name"],
    ["hostname", "a b", "is not a valid hostname"],
    ["ipv4-rdns", "lb example.com", "is not a valid hostname for reverse DNS"],
    ["ipv6-rdns", "-lb.example.com", "is not a valid hostname for reverse DNS"],
    ["health-check-http-domain", "exa mple.com", "is not a valid domain name"],
    ["health-check-http-path", "healthz", "is not a valid path"],
    ["health-check-http-path", "/a b", "is not a valid path"],
    ["http-cookie-name", "my cookie", "is not a valid cookie name"],
    ["http-cookie-name", "a;b", "is not a valid cookie name"],
    ["http-managed-certificate-domains", "exa_mple..com", "is not a domain name"],
  ];
  for (const [name, value, why] of table) {
    const { errors } = parse({ [name]: value });
    assertEquals(errors.length, 1, `${name}=${value}: ${errors.join("; ")}`);
    assert(errors[0].startsWith(`annotation ${PREFIX}${name}: "${value}" ${why}`), errors[0]);
  }
  const { errors } = parse({ protocol: "https", "certificate-type": "managed" });
  assert(errors[0].includes("http-managed-certificate-domains is required"), errors[0]);
});

Deno.test("LB annotations: values, Go durations and environment defaults", () => {
  const { spec, errors } = parse({
    "http-cookie-lifetime": "1h",
    "health-check-interval": "15",
    "algorithm-type": "LEAST_CONNECTIONS",
    "http-certificates": "a, 12 ,b",
    "disable-public-network": "True",
  });
  assertEquals(errors, []);
  assertEquals([
    spec.cookieLifetimeSeconds,
    spec.healthCheck.intervalSeconds,
    spec.algorithm,
    spec.certificates,
    spec.disablePublicNetwork,
  ], [
    3600,
    15,
    "least_connections",
    ["a", "12", "b"],
    true,
  ]);
  const env = {
    ...DEFAULTS,
    location: "fsn1",
    networkZone: undefined,
    type: "lb21",
    usesProxyProtocol: true,
    disableIpv6: true,
  };
  const d = parse({}, env).spec;
  assertEquals([d.location, d.type, d.proxyProtocol, d.ipv6Disabled, d.disablePublicNetwork, d.algorithm], [
    "fsn1",
    "lb21",
    true,
    true,
    undefined,
    undefined,
  ]);
  // An empty location annotation clears the env default so a network zone can be used.
  const z = parse({ location: "", "network-zone": "eu-central" }, env).spec;
  assertEquals([z.location, z.networkZone], [undefined, "eu-central"]);
});

Deno.test("LB annotations: control characters are escaped and long values cut in messages", () => {
  const nul = parse({ "ipv4-rdns": "lb\u0000.example.com" }).errors;
  assertEquals(nul.length, 1);
  assert(nul[0].includes('"lb\\u0000.example.com" is not a valid hostname'), nul[0]);
  const long = parse({ "health-check-http-path": "/" + "x".repeat(10_000) + " " }).errors;
  assertEquals(long.length, 1);
  assert(long[0].length < 300, `${long[0].length} characters`);
  assert(long[0].includes("(10002 characters)"), long[0]);
  assertEquals(parse({ "ipv4-rdns": "lb.example.com.", "http-cookie-name": "HCLBSTICKY" }).errors, []);
  assertEquals(
    parse({
      protocol: "https",
      "certificate-type": "managed",
      "http-managed-certificate-domains": "*.example.com,example.com",
    }).errors,
    [],
  );
});

Deno.test("lb annotations: HCCM's stage of the earliest refused value; acme staging read as Go reads it", () => {
  assertEquals(earliestStage([]), undefined);
  assertEquals(earliestStage(["ipv6-disabled", "health-check-retries"]), HccmStage.Services);
  assertEquals(earliestStage(["health-check-retries", "node-selector"]), HccmStage.NodeSelector);
  const staging = (v: string) =>
    parseLoadBalancerSpec(
      {
        metadata: { annotations: { "load-balancer.hetzner.cloud/http-managed-certificate-acme-staging": v } },
      },
      { enabled: true, disablePrivateIngress: false, usePrivateIp: false, disableIpv6: false },
    );
  assertEquals(["true", "True", "1", "t", "yes", "false"].map((v) => staging(v).spec.acmeStaging), [
    true,
    true,
    true,
    true,
    false,
    false,
  ]);
  assertEquals(staging("yes").errors, [], "never an error (HCCM ignores a value it cannot read)");
});
