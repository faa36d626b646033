/**
 * The service controller against the fake provider and an in-memory apiserver.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { newController } from "../testing/controller_harness.ts";
import { FakeProvider } from "../providers/fake/fake_provider.ts";
import { serviceController } from "./service.ts";

const node = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { providerID: `fake://${name}` },
  status: { conditions: [{ type: "Ready", status: "True" }] },
});

const service = (name: string, type = "LoadBalancer") => ({
  metadata: { name, namespace: "default", uid: `uid-${name}` },
  spec: { type, ports: [{ port: 80, protocol: "TCP" }] },
});

Deno.test("service controller (fake provider): ingress, finalizer and hosts for LoadBalancer Services only", async () => {
  const fake = new FakeProvider();
  const t = newController(serviceController, fake);
  t.apiserver.seed("nodes", node("a"));
  t.apiserver.seed("nodes", node("b"));
  t.apiserver.seed(
    "nodes",
    node("excluded", { "node.kubernetes.io/exclude-from-external-load-balancers": "" }),
  );
  t.apiserver.seed("services", service("web"));
  t.apiserver.seed("services", service("internal", "ClusterIP"));
  await t.runFor(400);
  const web = t.apiserver.object<Service>("services", "web", "default")!;
  assertEquals(web.status?.loadBalancer?.ingress?.[0]?.ip, "192.0.2.1");
  assertEquals(web.metadata?.finalizers, ["service.kubernetes.io/load-balancer-cleanup"]);
  assertEquals(fake.balancers.get("default/web")?.hosts, ["a", "b"]);
  assertEquals(fake.balancers.has("default/internal"), false);
  assertEquals(fake.calls.filter((c) => c.startsWith("ensure-load-balancer ")), [
    "ensure-load-balancer default/web",
  ]);
});

Deno.test("service controller (fake provider): stopping cancels the provider call under way: nothing created, no failure event", async () => {
  const fake = new FakeProvider();
  fake.delayMs = 2_000; // every provider call is still under way when the controller stops
  const t = newController(serviceController, fake);
  t.apiserver.seed("nodes", node("a"));
  t.apiserver.seed("services", service("web"));
  await t.runFor(300);
  assertEquals(fake.calls.filter((c) => c.startsWith("ensure-load-balancer ")), [
    "ensure-load-balancer default/web",
  ]);
  // The call ended with the signal instead of acting after the stop.
  assertEquals(fake.balancers.has("default/web"), false);
  const reasons = t.apiserver.objects<{ reason?: string }>("events").map((e) => e.reason);
  assertEquals(reasons.includes("SyncLoadBalancerFailed"), false, `events: ${reasons.join(", ")}`);
});

Deno.test("service controller (fake provider): a Node's warning from every balancer is said once (probe N17)", async () => {
  const fake = new FakeProvider();
  fake.ensureWarnings = [{
    reason: "ServerNotFound",
    message: "No server with id 888888 was found in Robot",
    node: "a",
  }];
  const t = newController(serviceController, fake);
  t.apiserver.seed("nodes", node("a"));
  for (const name of ["s1", "s2", "s3"]) t.apiserver.seed("services", service(name));
  await t.runFor(400);
  assertEquals(fake.calls.filter((c) => c.startsWith("ensure-load-balancer ")).length, 3);
  const said = t.apiserver.objects<{ reason?: string; involvedObject?: { kind?: string } }>("events")
    .filter((e) => e.reason === "ServerNotFound");
  assertEquals(said.map((e) => e.involvedObject?.kind), ["Node"]);
});
