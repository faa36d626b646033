import { assertEquals } from "../../../../testing/assert.ts";
import { ClusterFacts } from "./cluster_facts.ts";

Deno.test("cluster facts: unknown until learnt (every owner alive); then the cluster's identity and live Services", () => {
  const facts = new ClusterFacts();
  assertEquals([facts.clusterId(), facts.services(), facts.serviceExists("gone")], [
    undefined,
    undefined,
    true,
  ]);
  const services = [{ metadata: { uid: "u1", namespace: "shop", name: "web" } }];
  facts.learn({ clusterId: "c1", services: () => services });
  assertEquals(facts.clusterId(), "c1");
  assertEquals([facts.serviceExists("u1"), facts.serviceExists("gone")], [true, false]);
  assertEquals([facts.serviceName("u1"), facts.serviceName("gone")], ["shop/web", undefined]);
  services.push({ metadata: { uid: "u2", namespace: "shop", name: "api" } });
  assertEquals(facts.serviceExists("u2"), true, "asked each time, never a stale copy");
});

Deno.test("cluster facts: a tool's view without Services keeps every owner alive", () => {
  const facts = new ClusterFacts();
  facts.learn({ clusterId: "c1" });
  assertEquals([facts.services(), facts.serviceExists("anything")], [undefined, true]);
});
