/**
 * The route controller against the fake provider and an in-memory apiserver: the provider
 * contract (a route names its target Node) is what decides, not the hcloud provider's habits.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals, assertThrows } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { routeController } from "./route.ts";
import { sleepOn } from "../../lib/clock.ts";
import { NODES } from "../../kube/resources.ts";

function node(name: string, podCIDR: string, ip: string): Node & { metadata: { name: string } } {
  return {
    metadata: { name },
    spec: { podCIDR, podCIDRs: [podCIDR], providerID: `fake://${name}` },
    status: {
      addresses: [{ type: "InternalIP", address: ip }],
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
}

const ARGS = ["--cluster-cidr=10.244.0.0/16", "--route-reconciliation-period=100ms"];

Deno.test("route controller (fake provider): one route per Node, created once and kept", async () => {
  const fake = new FakeProvider();
  fake.addMachine("a");
  fake.addMachine("b");
  const t = newController(routeController, fake, ARGS);
  t.apiserver.seed("nodes", node("a", "10.244.0.0/24", "10.0.0.2"));
  t.apiserver.seed("nodes", node("b", "10.244.1.0/24", "10.0.0.3"));
  await t.runFor(600); // six reconciliation periods: enough for the old churn to show
  const writes = fake.calls.filter((c) => !c.startsWith("list-routes"));
  assertEquals(writes.sort(), ["create-route 10.244.0.0/24", "create-route 10.244.1.0/24"]);
  assertEquals([...fake.routeTable.values()].map((r) => r.targetNode).sort(), ["a", "b"]);
});

Deno.test("route controller (fake provider): a deleted Node's route goes, a foreign CIDR's route stays", async () => {
  const fake = new FakeProvider();
  fake.addMachine("a");
  fake.routeTable.set("10.244.9.0/24", {
    name: "gone",
    targetNode: "gone",
    destinationCIDR: "10.244.9.0/24",
  });
  fake.routeTable.set("192.168.0.0/24", {
    name: "vpn",
    targetNode: "vpn",
    destinationCIDR: "192.168.0.0/24",
  });
  const t = newController(routeController, fake, ARGS);
  t.apiserver.seed("nodes", node("a", "10.244.0.0/24", "10.0.0.2"));
  await t.runFor(500);
  assertEquals([...fake.routeTable.keys()].sort(), ["10.244.0.0/24", "192.168.0.0/24"]);
  const condition = t.apiserver.object<Node>("nodes", "a")?.status?.conditions?.find((c) =>
    c.type === "NetworkUnavailable"
  );
  assertEquals([condition?.status, condition?.reason], ["False", "RouteCreated"]);
});

Deno.test("route controller (fake provider): stopping cancels the route being created: no route, no failure event", async () => {
  const fake = new FakeProvider();
  fake.addMachine("a");
  const t = newController(routeController, fake, ARGS);
  t.apiserver.seed("nodes", node("a", "10.244.0.0/24", "10.0.0.2"));
  // The list answers at once; the create is still under way when the controller stops.
  const slowCreate = fake.routes.createRoute;
  fake.routes.createRoute = async (cluster, hint, route, signal) => {
    await sleepOn(t.clock, 2_000, signal);
    await slowCreate(cluster, hint, route, signal);
  };
  await t.runFor(300);
  assertEquals(fake.routeTable.size, 0);
  const reasons = t.apiserver.objects<{ reason?: string }>("events").map((e) => e.reason);
  assertEquals(reasons.includes("FailedToCreateRoute"), false, `events: ${reasons.join(", ")}`);
});

Deno.test("route controller (fake provider): a route through another cluster's machine is never deleted or displaced (probe N8)", async () => {
  const fake = new FakeProvider();
  fake.addMachine("a");
  fake.addMachine("b");
  // Cluster B, in the same network with the same cluster CIDR: its routes go through its machines.
  fake.routeTable.set("10.244.5.0/24", {
    name: "b-1",
    targetNode: "b-1",
    destinationCIDR: "10.244.5.0/24",
    gatewayProviderID: "fake://b-1",
  });
  fake.routeTable.set("10.244.1.0/24", {
    name: "b-2",
    targetNode: "b-2",
    destinationCIDR: "10.244.1.0/24",
    gatewayProviderID: "fake://b-2",
  });
  const t = newController(routeController, fake, ARGS);
  t.apiserver.seed("nodes", node("a", "10.244.0.0/24", "10.0.0.2"));
  t.apiserver.seed("nodes", node("b", "10.244.1.0/24", "10.0.0.3")); // overlaps B's 10.244.1.0/24
  await t.runFor(600);
  const writes = fake.calls.filter((c) => !c.startsWith("list-routes"));
  assertEquals(writes, ["create-route 10.244.0.0/24"], "no delete, no fight over 10.244.1.0/24");
  assertEquals(fake.routeTable.get("10.244.1.0/24")?.targetNode, "b-2");
  const conflicts = t.apiserver.objects<{ reason?: string; involvedObject?: { name?: string } }>("events")
    .filter((e) => e.reason === "RouteConflict");
  assertEquals(conflicts.map((e) => e.involvedObject?.name), ["b"], "one Warning, on the blocked Node");
});

Deno.test("route controller (fake provider): a Node seen between its address and its provider ID, then deleted, leaves no route (explorer seed 101)", async () => {
  const fake = new FakeProvider();
  fake.addMachine("a");
  const t = newController(routeController, fake, ARGS);
  // The node controller writes the addresses and the provider ID apart: a crash, or a lagging
  // view, shows the Node with the one and not yet the other.
  const between = node("a", "10.244.0.0/24", "10.0.0.2");
  delete between.spec!.providerID;
  t.apiserver.seed("nodes", between);
  await t.run(async () => {
    await t.advance(300);
    assertEquals([...fake.routeTable.keys()], ["10.244.0.0/24"], "the route is made");
    await t.client.delete(NODES, "a");
    await t.advance(300);
  });
  assertEquals([...fake.routeTable.keys()], [], "the route of the deleted Node goes");
  assertEquals(fake.calls.filter((c) => c.startsWith("delete-route")), ["delete-route 10.244.0.0/24"]);
});

for (const advertised of [false, true]) {
  Deno.test(
    `route controller (fake provider): a full network is reported once per Node, never retried in a loop (limit ${
      advertised ? "advertised" : "found by a refusal"
    })`,
    async () => {
      const fake = new FakeProvider();
      fake.routeLimit = 2;
      if (advertised) fake.routes.maxRoutes = 2;
      for (const n of ["a", "b", "c"]) fake.addMachine(n);
      const t = newController(routeController, fake, ARGS);
      t.apiserver.seed("nodes", node("a", "10.244.0.0/24", "10.0.0.2"));
      t.apiserver.seed("nodes", node("b", "10.244.1.0/24", "10.0.0.3"));
      t.apiserver.seed("nodes", node("c", "10.244.2.0/24", "10.0.0.4"));
      const routed = (n: string) => [...fake.routeTable.values()].some((r) => r.targetNode === n);
      await t.run(async () => {
        await t.advance(800); // eight reconciliation periods
        assertEquals(fake.routeTable.size, 2);
        // Two creates, plus (when the limit is not advertised) the one refusal that taught it: no loop.
        const creates = fake.calls.filter((c) => c.startsWith("create-route")).length;
        assertEquals(creates, advertised ? 2 : 3);
        const waiting = ["a", "b", "c"].find((n) => !routed(n))!;
        type Event = { reason?: string; message?: string; involvedObject?: { name?: string } };
        const events = t.apiserver.objects<Event>("events");
        const limited = events.filter((e) => e.reason === "RouteLimitReached");
        assertEquals(
          limited.map((e) => e.involvedObject?.name),
          [waiting],
          "one Warning, on the Node left out",
        );
        assertEquals(/holds at most 2 routes|holds no more routes/.test(limited[0].message ?? ""), true);
        assertEquals(events.some((e) => e.reason === "FailedToCreateRoute"), false);
        const condition = t.apiserver.object<Node>("nodes", waiting)?.status?.conditions?.find((c) =>
          c.type === "NetworkUnavailable"
        );
        assertEquals([condition?.status, condition?.reason], ["True", "NoRouteCreated"]);
        assertEquals(
          condition?.message,
          "RouteController failed to create a route: the network holds no more routes",
        );
        assertEquals(t.metrics.gauge("route_limit_unrouted_nodes", "").get(), 1);
        // A route freed (its Node deleted) makes room: the waiting Node gets its route.
        await t.client.delete(NODES, ["a", "b", "c"].find((n) => n !== waiting)!);
        await t.advance(200); // two reconciliation periods
        assertEquals(routed(waiting), true, "the waiting Node is routed");
        assertEquals(t.metrics.gauge("route_limit_unrouted_nodes", "").get(), 0);
        assertEquals(fake.routeTable.size, 2);
      });
    },
  );
}

Deno.test("route controller (fake provider): a dual-stack Node's IPv6 range is said to get no route once, not each run", async () => {
  const fake = new FakeProvider();
  fake.addMachine("a");
  const t = newController(routeController, fake, [...ARGS, "--cluster-cidr=10.244.0.0/16,2001:db8::/32"]);
  const a = node("a", "10.244.0.0/24", "10.0.0.2");
  a.spec!.podCIDRs = ["10.244.0.0/24", "2001:db8:0:1:1::/80"];
  t.apiserver.seed("nodes", a);
  await t.runFor(600); // six reconciliation periods
  const skipped = t.apiserver.objects<{ reason?: string; count?: number }>("events")
    .filter((e) => e.reason === "IPv6RouteSkipped");
  assertEquals(skipped.map((e) => e.count ?? 1), [1], "one event, never counted up");
  assertEquals([...fake.routeTable.keys()], ["10.244.0.0/24"]);
});

Deno.test("route controller: off when the provider has no routes, saying why in the provider's words", () => {
  const fake = new FakeProvider();
  const bare = {
    name: "mycloud",
    instances: fake.instances,
    absent: { routes: "MYCLOUD_NETWORK is not set" },
  };
  assertEquals(
    assertThrows(() => newController(routeController, bare, ["--cluster-cidr=10.244.0.0/16"]), Error).message,
    "controller disabled: provider mycloud offers no routes (MYCLOUD_NETWORK is not set)",
  );
  assertEquals(
    assertThrows(
      () => newController(routeController, { name: "quiet" }, ["--cluster-cidr=10.244.0.0/16"]),
      Error,
    )
      .message,
    "controller disabled: provider quiet offers no routes",
  );
});
