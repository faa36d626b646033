import { assertEquals } from "../../../../testing/assert.ts";
import { allUnhealthy, balancerHealth, targetHealth, TargetHealthGauge } from "./target_health.ts";
import { Registry } from "../../../../lib/metrics.ts";

const status = (s: string) => [{ listen_port: 80, status: s }];
const lb = (statuses: string[], check = { protocol: "http", port: 10256, http: { path: "/healthz" } }) =>
  ({
    services: [{ health_check: check }],
    targets: [{
      type: "label_selector",
      targets: statuses.map((s, i) => ({ type: "server", server: { id: i }, health_status: status(s) })),
    }],
    // deno-lint-ignore no-explicit-any
  }) as any;

Deno.test("target health: counts, and a balancer none of whose targets passes its check is named with the check", () => {
  assertEquals(targetHealth(lb(["healthy", "unhealthy", "unknown"])), {
    healthy: 1,
    unhealthy: 1,
    unknown: 1,
  });
  assertEquals(allUnhealthy(lb(["healthy", "unhealthy"])), undefined, "one target serves");
  assertEquals(allUnhealthy(lb(["unknown", "unknown"])), undefined, "no check has answered yet");
  assertEquals(
    allUnhealthy(lb(["unhealthy", "unhealthy", "unknown"])),
    "none of its 2 targets passes the health check (http on port 10256 path /healthz); check the " +
      "health-check settings (a kube-proxy check needs kube-proxy on the Nodes)",
  );
  assertEquals(
    allUnhealthy(lb(["unhealthy"], { protocol: "tcp", port: 30080 } as never))?.includes("tcp on port 30080"),
    true,
  );
});

Deno.test("target health: the metric names a Service, a shared balancer's share key, or the owner's UID", () => {
  const named = (labels: Record<string, string>) =>
    balancerHealth({ name: "lb", labels, targets: [] }).service;
  assertEquals(named({ "deno-ccm/service-namespace": "shop", "deno-ccm/service-name": "web" }), "shop/web");
  assertEquals(named({ "deno-ccm/service-namespace": "shop", "deno-ccm/share": "edge" }), "shop/shared:edge");
  assertEquals(named({ "hcloud-ccm/service-uid": "u-1" }), "u-1");
});

Deno.test("target health: one series per checked target (server ID or IP), 0 or 1, and none for one not checked yet", () => {
  const registry = new Registry();
  const gauge = new TargetHealthGauge(registry);
  const withIp = lb(["healthy", "unhealthy", "unknown"]);
  withIp.targets.push({ type: "ip", ip: { ip: "203.0.113.9" }, health_status: status("unhealthy") });
  gauge.update([balancerHealth({ name: "web", labels: {}, targets: withIp.targets })]);
  const series = () =>
    registry.render().split("\n").filter((l) => l.startsWith("hcloud_load_balancer_target_healthy{")).sort();
  assertEquals(series(), [
    'hcloud_load_balancer_target_healthy{load_balancer="web",target="0"} 1',
    'hcloud_load_balancer_target_healthy{load_balancer="web",target="1"} 0',
    'hcloud_load_balancer_target_healthy{load_balancer="web",target="203.0.113.9"} 0',
  ], "target 2 is not checked yet: no series");
  gauge.update([]);
  assertEquals(series(), [], "a balancer gone takes its series");
});
