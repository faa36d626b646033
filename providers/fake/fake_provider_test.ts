import { assertEquals, assertRejects } from "../../testing/assert.ts";
import { FAKE_NODE_SELECTOR, FakeProvider } from "./fake_provider.ts";
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
  const status = await fake.loadBalancers.ensureLoadBalancer({ clusterName: "k", service: svc, nodes: [n1] });
  assertEquals(status.ingress.length, 1);
  assertEquals(fake.loadBalancers.getLoadBalancerName("k", svc), "a12345678");
  fake.errors["update-load-balancer"] = new RetryAfterError("busy", 100);
  await assertRejects(
    () => fake.loadBalancers.updateLoadBalancer({ clusterName: "k", service: svc, nodes: [] }),
    RetryAfterError,
  );
  await fake.routes.createRoute("k", "uid", { name: "", targetNode: "n1", destinationCIDR: "10.244.0.0/24" });
  assertEquals((await fake.routes.listRoutes("k")).map((r) => [r.targetNode, r.blackhole]), [["n1", false]]);
  assertEquals(fake.callsOf("ensure-load-balancer"), ["ensure-load-balancer default/web"]);
  assertEquals(fake.calls.length, 8);
});

Deno.test("fake provider: every capability; writes refused once fenced", async () => {
  const fake = new FakeProvider();
  const leading = new AbortController();
  await fake.initialize({ clusterId: "c1", services: () => [] }, leading.signal);
  assertEquals(fake.cluster?.clusterId, "c1");
  fake.fence(leading.signal);
  const svc = (name: string) => ({ metadata: { name, namespace: "default", uid: `uid-${name}` } });
  const nodes = [{ metadata: { name: "n1", labels: { pool: "edge" } } }, { metadata: { name: "n2" } }];
  await fake.loadBalancers.ensureLoadBalancer({ clusterName: "k", service: svc("a"), nodes });
  await fake.loadBalancers.ensureLoadBalancer({ clusterName: "k", service: svc("b"), nodes });
  const picky = { metadata: { ...svc("p").metadata, annotations: { [FAKE_NODE_SELECTOR]: "pool=edge" } } };
  assertEquals([...fake.loadBalancers.nodeTargets.selected(picky, nodes) ?? []], ["n1"]);
  assertEquals(fake.loadBalancers.nodeTargets.selected(svc("a"), nodes), undefined);
  assertEquals([...(await fake.loadBalancers.inventory.owners(2)) ?? []].sort(), ["uid-a", "uid-b"]);
  fake.drifted.set("uid-a", ["port 80 deleted"]);
  assertEquals((await fake.loadBalancers.inventory.drift())?.drifted.get("uid-a"), ["port 80 deleted"]);
  assertEquals(await fake.loadBalancers.inventory.sweepOrphans(new Set(["uid-a"])), 1);
  let changed = 0;
  fake.onCloudChanged(() => changed++);
  fake.changeCloud();
  assertEquals(changed, 1);
  leading.abort();
  const err = await assertRejects(
    () => fake.loadBalancers.ensureLoadBalancer({ clusterName: "k", service: svc("c"), nodes }),
    Error,
  );
  assertEquals(err.message, "fenced: this process no longer leads");
  assertEquals(fake.balancers.has("default/c"), false);
});
