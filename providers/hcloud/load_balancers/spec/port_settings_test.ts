import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../../testing/assert.ts";
import type { LoadBalancerDefaults } from "./defaults.ts";
import { parseLoadBalancerSpec, PREFIX } from "./annotations.ts";
import { desiredServices } from "../core/desired.ts";
import { PORT_ANNOTATION_PREFIX as PORT } from "./port_settings.ts";

const DEFAULTS: LoadBalancerDefaults = {
  enabled: true,
  disablePrivateIngress: false,
  usePrivateIp: false,
  disableIpv6: false,
};
/** A Service with TCP ports 80 and 443 (and UDP 53) and the given annotations. */
const svc = (annotations: Record<string, string>): Service => ({
  metadata: { uid: "u", annotations },
  spec: {
    type: "LoadBalancer",
    ports: [
      { name: "http", port: 80, nodePort: 30080, protocol: "TCP" },
      { name: "https", port: 443, nodePort: 30443, protocol: "TCP" },
      { name: "dns", port: 53, nodePort: 30053, protocol: "UDP" },
    ],
  },
});
const parse = (annotations: Record<string, string>) => parseLoadBalancerSpec(svc(annotations), DEFAULTS);

Deno.test("per-port settings: http on 80, https on 443 with its own certificates and PROXY protocol", () => {
  const service = svc({
    [`${PORT}80-protocol`]: "http",
    [`${PORT}443-protocol`]: "HTTPS",
    [`${PORT}443-http-certificates`]: "web, 17",
    [`${PORT}443-uses-proxyprotocol`]: "true",
    [`${PORT}443-health-check-protocol`]: "http",
    [`${PORT}443-health-check-http-path`]: "/ready",
    [`${PORT}443-http-status-codes`]: "2??,301",
  });
  const { spec, errors } = parseLoadBalancerSpec(service, DEFAULTS);
  assertEquals(errors, []);
  assertEquals(spec.protocol, "tcp", "the Service-wide protocol is untouched");
  const { services } = desiredServices(service, spec, [], new Map([[443, [5, 17]]]));
  assertEquals(services.map((s) => [s.listen_port, s.protocol, s.proxyprotocol, s.http?.certificates]), [
    [80, "http", false, undefined],
    [443, "https", true, [5, 17]],
  ]);
  assertEquals(services[1].health_check, {
    protocol: "http",
    port: 30443,
    http: { domain: null, path: "/ready", tls: false, status_codes: ["2??", "301"] },
  });
  assertEquals(services[0].health_check, { protocol: "tcp", port: 30080 }, "port 80 keeps the default check");
});

Deno.test("per-port settings: tcp passthrough on 443 beside Service-wide https elsewhere; a redirect takes port 80", () => {
  const passthrough = svc({
    [`${PREFIX}protocol`]: "http",
    [`${PORT}443-protocol`]: "tcp",
  });
  const parsed = parseLoadBalancerSpec(passthrough, DEFAULTS);
  assertEquals(parsed.errors, []);
  assertEquals(
    desiredServices(passthrough, parsed.spec, []).services.map((s) => [s.listen_port, s.protocol]),
    [[80, "http"], [443, "tcp"]],
  );
  const redirect = svc({
    [`${PORT}443-protocol`]: "https",
    [`${PORT}443-http-certificates`]: "web",
    [`${PORT}443-http-redirect-http`]: "true",
  });
  const r = parseLoadBalancerSpec(redirect, DEFAULTS);
  assertEquals(r.errors, []);
  const { services } = desiredServices(redirect, r.spec, [], new Map([[443, [5]]]));
  assertEquals(services.map((s) => [s.listen_port, s.protocol, s.http?.redirect_http]), [[
    443,
    "https",
    true,
  ]]);
});

Deno.test("per-port settings: no annotation, no change: the Service-wide settings serve every port", () => {
  const plain = svc({ [`${PREFIX}protocol`]: "https", [`${PREFIX}http-certificates`]: "web" });
  const { spec, errors } = parseLoadBalancerSpec(plain, DEFAULTS);
  assertEquals(errors, []);
  assertEquals(spec.ports.size, 0);
  assertEquals(
    desiredServices(plain, spec, [7]).services.map((s) => [s.listen_port, s.protocol, s.http?.certificates]),
    [[80, "https", [7]], [443, "https", [7]]],
  );
});

Deno.test("per-port settings: bad names, ports, values and combinations are refused naming annotation and value", () => {
  const table: [Record<string, string>, string, string][] = [
    [{ [`${PORT}443-protokol`]: "https" }, `${PORT}443-protokol`, "is not a per-port setting"],
    [{ [`${PORT}0443-protocol`]: "https" }, `${PORT}0443-protocol`, "is not a per-port setting"],
    [{ [`${PORT}https-protocol`]: "https" }, `${PORT}https-protocol`, "is not a per-port setting"],
    [{ [`${PORT}8443-protocol`]: "tcp" }, `${PORT}8443-protocol`, "not a TCP port of this Service"],
    [{ [`${PORT}53-protocol`]: "tcp" }, `${PORT}53-protocol`, "not a TCP port of this Service"],
    [{ [`${PORT}443-protocol`]: "udp" }, `${PORT}443-protocol`, "is not one of tcp, http, https"],
    [{ [`${PORT}443-uses-proxyprotocol`]: "yes" }, `${PORT}443-uses-proxyprotocol`, "is not a boolean"],
    [{ [`${PORT}443-health-check-port`]: "0" }, `${PORT}443-health-check-port`, "between 1 and 65535"],
    [{ [`${PORT}443-http-status-codes`]: "20x" }, `${PORT}443-http-status-codes`, "status codes"],
    [
      { [`${PORT}443-health-check-http-path`]: "ready" },
      `${PORT}443-health-check-http-path`,
      "is not a valid",
    ],
    // A certificate on a port that does not speak https.
    [{ [`${PORT}443-http-certificates`]: "web" }, `${PORT}443-http-certificates`, "needs protocol https"],
    [
      { [`${PORT}80-protocol`]: "http", [`${PORT}80-certificate-type`]: "managed" },
      `${PORT}80-certificate-type`,
      "needs protocol https on port 80, which speaks http",
    ],
    [
      { [`${PORT}443-protocol`]: "https" },
      `${PORT}443-protocol`,
      "names no certificate for port 443",
    ],
    [
      { [`${PORT}443-protocol`]: "https", [`${PORT}443-certificate-type`]: "managed" },
      `${PORT}443-certificate-type`,
      "needs load-balancer.hetzner.cloud/http-managed-certificate-domains",
    ],
    [
      {
        [`${PORT}443-protocol`]: "https",
        [`${PORT}443-http-certificates`]: "web",
        [`${PORT}443-certificate-type`]: "managed",
        [`${PREFIX}http-managed-certificate-domains`]: "example.com",
      },
      `${PORT}443-certificate-type`,
      "(set one)",
    ],
    // Redirects: https only, not on 80, never twice, never against the Service-wide annotation.
    [
      { [`${PORT}80-protocol`]: "http", [`${PORT}80-http-redirect-http`]: "true" },
      `${PORT}80-http-redirect-http`,
      "needs protocol https on port 80",
    ],
    [
      {
        [`${PREFIX}protocol`]: "https",
        [`${PREFIX}http-certificates`]: "w",
        [`${PORT}80-http-redirect-http`]: "true",
      },
      `${PORT}80-http-redirect-http`,
      "port 80 cannot be the HTTPS port",
    ],
    [
      {
        [`${PORT}443-protocol`]: "https",
        [`${PORT}443-http-certificates`]: "web",
        [`${PORT}443-http-redirect-http`]: "true",
        [`${PORT}80-protocol`]: "http",
      },
      `${PORT}443-http-redirect-http`,
      "takes port 80, which has settings of its own",
    ],
    [
      {
        [`${PORT}443-protocol`]: "https",
        [`${PORT}443-http-certificates`]: "web",
        [`${PORT}443-http-redirect-http`]: "true",
        [`${PREFIX}http-redirect-http`]: "false",
      },
      `${PORT}443-http-redirect-http`,
      "contradicts load-balancer.hetzner.cloud/http-redirect-http",
    ],
    [
      {
        [`${PORT}443-protocol`]: "https",
        [`${PORT}443-http-certificates`]: "web",
        [`${PORT}443-http-redirect-http`]: "true",
        [`${PREFIX}attach-to`]: "shared-lb",
      },
      `${PORT}443-http-redirect-http`,
      "would take port 80 of a balancer made outside Kubernetes",
    ],
    [
      { [`${PORT}443-health-check-protocol`]: "tcp", [`${PORT}443-health-check-http-path`]: "/x" },
      `${PORT}443-health-check-protocol`,
      "checks TCP",
    ],
  ];
  for (const [annotations, key, why] of table) {
    const { errors, invalid } = parse(annotations);
    assert(
      errors.some((e) => e.startsWith(`annotation ${key}: `) && e.includes(why)),
      `${JSON.stringify(annotations)}: expected "${key}" … "${why}", got ${JSON.stringify(errors)}`,
    );
    assert(invalid.has(key), `${key} marked invalid`);
  }
});

Deno.test("per-port settings: a redirect needs a port 80 on the Service to answer on", () => {
  const only443: Service = {
    metadata: {
      uid: "u",
      annotations: {
        [`${PORT}443-protocol`]: "https",
        [`${PORT}443-http-certificates`]: "web",
        [`${PORT}443-http-redirect-http`]: "true",
      },
    },
    spec: { type: "LoadBalancer", ports: [{ port: 443, nodePort: 30443, protocol: "TCP" }] },
  };
  const { errors } = parseLoadBalancerSpec(only443, DEFAULTS);
  assertEquals(errors.length, 1);
  assert(errors[0].includes("which this Service does not have: add port 80"), errors[0]);
  // The value is quoted and cut: a long or odd value cannot fill an event.
  const long = parse({ [`${PORT}443-protocol`]: "x".repeat(500) + "\n" }).errors[0];
  assert(long.length < 300 && !long.includes("\n"), long);
});

Deno.test("per-port settings: TLS Secrets need the operator's switch, a valid name, https, and no second source", () => {
  const on = { ...DEFAULTS, tlsSecrets: true };
  const parseOn = (a: Record<string, string>) => parseLoadBalancerSpec(svc(a), on);
  const TLS = "service.deno-ccm.io/tls-secret";
  const good = { [`${PORT}443-protocol`]: "https", [`${PORT}443-tls-secret`]: "web-tls" };
  assertEquals(parseOn(good).errors, []);
  assertEquals(parseOn({ [`${PREFIX}protocol`]: "https", [TLS]: "web-tls" }).errors, []);
  const off = parse(good).errors;
  assert(off.some((e) => e.includes("HCLOUD_LOAD_BALANCERS_TLS_SECRETS=true")), off.join("; "));
  const table: [Record<string, string>, string, string][] = [
    [{ [TLS]: "Web_TLS" }, TLS, "is not a valid Secret name"],
    [{ [TLS]: "web", [`${PREFIX}http-certificates`]: "c" }, TLS, "(set one)"],
    [{ [`${PORT}443-tls-secret`]: "web" }, `${PORT}443-tls-secret`, "needs protocol https"],
    [{ ...good, [`${PORT}443-http-certificates`]: "c" }, `${PORT}443-tls-secret`, "(set one)"],
    [
      { [`${PORT}443-protocol`]: "https", [`${PORT}443-tls-secret`]: "-x" },
      `${PORT}443-tls-secret`,
      "Secret name",
    ],
  ];
  for (const [annotations, key, why] of table) {
    const { errors } = parseOn(annotations);
    assert(
      errors.some((e) => e.startsWith(`annotation ${key}: `) && e.includes(why)),
      `${JSON.stringify(annotations)}: expected "${key}" … "${why}", got ${JSON.stringify(errors)}`,
    );
  }
});
