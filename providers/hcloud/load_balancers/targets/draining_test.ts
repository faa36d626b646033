import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../../../testing/assert.ts";
import type { LoadBalancerDefaults } from "../spec/mod.ts";
import { KUBE_PROXY_HEALTH_CHECK_ANNOTATION } from "../../names.ts";
import { parseLoadBalancerSpec, PREFIX } from "../spec/mod.ts";
import { desiredServerIds, desiredServices, KUBE_PROXY_HEALTH_PORT } from "../core/desired.ts";
import { selectedNodes } from "./targets.ts";
import { DRAIN_MARGIN_MS, drainPeriodMs } from "./draining.ts";

const DEFAULTS: LoadBalancerDefaults = {
  enabled: true,
  disablePrivateIngress: false,
  usePrivateIp: false,
  disableIpv6: false,
};
const svc = (annotations: Record<string, string>, spec: Service["spec"] = {}): Service => ({
  metadata: { uid: "u", annotations },
  spec: { type: "LoadBalancer", ports: [{ port: 80, nodePort: 30080, protocol: "TCP" }], ...spec },
});
const parse = (s: Service, defaults = DEFAULTS) => parseLoadBalancerSpec(s, defaults);

Deno.test("draining: off unless the operator asks; the period lets the health check fail the Node first", () => {
  assertEquals(drainPeriodMs(DEFAULTS), 0, "the official CCM's behaviour by default");
  // Hetzner's defaults: 15 s interval, 10 s timeout, 3 retries.
  assertEquals(drainPeriodMs({ ...DEFAULTS, drainTargets: true }), 70_000 + DRAIN_MARGIN_MS);
  const quick = {
    ...DEFAULTS,
    drainTargets: true,
    healthCheckIntervalMs: 3_000,
    healthCheckTimeoutMs: 1_000,
    healthCheckRetries: 1,
  };
  assertEquals(drainPeriodMs(quick), 7_000 + DRAIN_MARGIN_MS);
});

Deno.test("kube-proxy health check: opt-in for Cluster traffic, never over explicit settings or Local", () => {
  const check = (s: Service, defaults = DEFAULTS) =>
    desiredServices(s, parse(s, defaults).spec, []).services[0].health_check;
  assertEquals(check(svc({})), { protocol: "tcp", port: 30080 }, "the official CCM's TCP check by default");
  const proxy = svc({ [KUBE_PROXY_HEALTH_CHECK_ANNOTATION]: "true" });
  assertEquals(check(proxy), {
    protocol: "http",
    port: KUBE_PROXY_HEALTH_PORT,
    http: { domain: null, path: "/healthz", tls: false },
  });
  assertEquals(check(svc({}), { ...DEFAULTS, kubeProxyHealthCheck: true }).port, 10256, "cluster-wide");
  // Timing settings keep it; settings of what to ask win, as does Local's health check node port.
  const timed = check(svc({ ...proxy.metadata!.annotations, [`${PREFIX}health-check-interval`]: "3s" }));
  assertEquals([timed.port, timed.interval, timed.http?.path], [10256, 3, "/healthz"]);
  assertEquals(
    check(svc({ ...proxy.metadata!.annotations, [`${PREFIX}health-check-port`]: "8080" })).port,
    8080,
  );
  const local = svc(proxy.metadata!.annotations!, {
    externalTrafficPolicy: "Local",
    healthCheckNodePort: 31000,
  });
  assertEquals(check(local).port, 31000);
});

Deno.test("draining: Nodes the controller keeps stay server targets although the node selector no longer admits them", () => {
  const node = (name: string, id: number, pool: string): Node => ({
    metadata: { name, labels: { pool } },
    spec: { providerID: `hcloud://${id}` },
  });
  const nodes = [node("a", 1, "web"), node("b", 2, "db"), node("c", 3, "db")];
  const { spec } = parse(svc({ [`${PREFIX}node-selector`]: "pool=web" }));
  assertEquals(desiredServerIds(nodes, spec).ids, [1]);
  assertEquals(desiredServerIds(nodes, spec, false, new Set(["b"])).ids, [1, 2]);
  assertEquals(selectedNodes(nodes, spec, new Set(["b"])).map((n) => n.metadata?.name), ["a", "b"]);
  // Kept names that are not among the Nodes given add nothing.
  assertEquals(desiredServerIds(nodes, spec, false, new Set(["gone"])).ids, [1]);
});
