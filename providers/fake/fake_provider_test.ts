import { assertEquals, assertRejects } from "../../testing/assert.ts";
import { FakeProvider } from "./fake_provider.ts";
import { RetryAfterError } from "../errors.ts";

Deno.test("fake provider: state, call log and injected errors", async () => {
  const fake = new FakeProvider();
  fake.addMachine("n1", { instanceType: "big", shutdown: true });
  const n1 = { metadata: { name: "n1" } };
  assertEquals(await fake.instances.instanceExists(n1), true);
  assertEquals(await fake.instances.instanceShutdown(n1), true);
  assertEquals((await fake.instances.instanceMetadata(n1))?.instanceType, "big");
  assertEquals(
    await fake.instances.instanceExists({ metadata: { name: "gone" }, spec: { providerID: "fake://gone" } }),
    false,
  );
  const svc = {
    metadata: { name: "web", namespace: "default", uid: "1234-5678" },
    spec: { ports: [{ port: 80 }] },
  };
  const status = await fake.loadBalancers.ensureLoadBalancer("k", svc, [n1]);
  assertEquals(status.ingress.length, 1);
  assertEquals(fake.loadBalancers.getLoadBalancerName("k", svc), "a12345678");
  fake.errors["update-load-balancer"] = new RetryAfterError("busy", 100);
  await assertRejects(() => fake.loadBalancers.updateLoadBalancer("k", svc, []), RetryAfterError);
  await fake.routes.createRoute("k", "uid", { name: "", targetNode: "n1", destinationCIDR: "10.244.0.0/24" });
  assertEquals((await fake.routes.listRoutes("k")).map((r) => [r.targetNode, r.blackhole]), [["n1", false]]);
  assertEquals(fake.callsOf("ensure-load-balancer"), ["ensure-load-balancer default/web"]);
  assertEquals(fake.calls.length, 8);
});
