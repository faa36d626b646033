/**
 * The node IPAM controller against the fake provider's machine records and an in-memory apiserver:
 * pod CIDRs per family in the cluster's order, IPv6 from each machine's /64, Nodes that wait and
 * say why, ranges a kubelet registered, another allocator, a /64 that changed.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { eventually } from "../../testing/helpers.ts";
import { NODES } from "../../kube/resources.ts";
import { nodeIpamController } from "./node_ipam.ts";

const DUAL = ["--controllers=node-ipam-controller", "--allocate-node-cidrs=true"];

function setup(args: string[], machines: Record<string, string[]> = {}) {
  const fake = new FakeProvider();
  for (const [name, cidrs] of Object.entries(machines)) fake.addMachine(name, { cidrs });
  const t = newController(nodeIpamController, fake, [...DUAL, ...args]);
  const node = (name: string, extra: Partial<Node> = {}): Node => ({
    metadata: { name, ...extra.metadata },
    spec: extra.spec ?? { providerID: `fake://${name}` },
  });
  const cidrs = (name: string) => t.apiserver.object<Node>("nodes", name)?.spec?.podCIDRs ?? [];
  const events = () =>
    t.apiserver.objects<{ reason?: string; message?: string; involvedObject?: { name?: string } }>("events")
      .map((e) => `${e.involvedObject?.name} ${e.reason}: ${e.message}`);
  return { fake, t, node, cidrs, events };
}

Deno.test("node ipam: each Node gets IPv4 from --cluster-cidr and IPv6 from index 1 of its machine's /64, in the cluster's order", async () => {
  const { t, node, cidrs } = setup(["--cluster-cidr=10.244.0.0/16,2a01:4f8::/32"], {
    a: ["2a01:4f8:c0c:a::/64"],
    b: ["2a01:4f8:c0c:b::/64"],
  });
  t.apiserver.seed("nodes", node("a"));
  t.apiserver.seed("nodes", node("b"));
  await t.runWhile(async () => {
    await eventually(() => cidrs("a").length > 0 && cidrs("b").length > 0, 5_000);
  });
  // Which Node is handled first is not fixed: one /24 each, and each its own machine's /80.
  assertEquals(new Set([cidrs("a")[0], cidrs("b")[0]]), new Set(["10.244.0.0/24", "10.244.1.0/24"]));
  assertEquals([cidrs("a")[1], cidrs("b")[1]], ["2a01:4f8:c0c:a:1::/80", "2a01:4f8:c0c:b:1::/80"]);
  assertEquals(t.apiserver.object<Node>("nodes", "a")?.spec?.podCIDR, cidrs("a")[0], "podCIDR is the first");
});

Deno.test("node ipam: an IPv6-primary cluster lists IPv6 first; --node-cidr-mask-size-ipv6 sizes it; RangeAllocator takes IPv6 from the range", async () => {
  const first = setup(["--cluster-cidr=2a01:4f8::/32,10.244.0.0/16", "--node-cidr-mask-size-ipv6=112"], {
    a: ["2a01:4f8:c0c:a::/64"],
  });
  first.t.apiserver.seed("nodes", first.node("a"));
  await first.t.runWhile(() => eventually(() => first.cidrs("a").length > 0, 5_000));
  assertEquals(first.cidrs("a"), ["2a01:4f8:c0c:a::1:0/112", "10.244.0.0/24"]);

  const range = setup(["--cluster-cidr=10.244.0.0/16,fd00:10::/56", "--cidr-allocator-type=RangeAllocator"]);
  range.t.apiserver.seed("nodes", range.node("x", { spec: {} }));
  await range.t.runWhile(() => eventually(() => range.cidrs("x").length > 0, 5_000));
  assertEquals(range.cidrs("x"), ["10.244.0.0/24", "fd00:10::/64"], "no machine needed, none asked");
  assertEquals(range.fake.callsOf("machine-record"), []);
});

Deno.test("node ipam: a Node waits for its provider ID; a machine without a /64 or outside the range is said once and takes nothing", async () => {
  const { t, node, cidrs, events, fake } = setup(["--cluster-cidr=10.244.0.0/16,2a01:4f8::/32"], {
    late: ["2a01:4f8:c0c:1::/64"],
    nov6: [],
    away: ["2001:db8:1::/64"],
  });
  t.apiserver.seed("nodes", node("late", { spec: {} }));
  t.apiserver.seed("nodes", node("nov6"));
  t.apiserver.seed("nodes", node("away"));
  await t.runWhile(async () => {
    await eventually(() => events().length >= 2, 5_000);
    assertEquals(
      fake.callsOf("machine-record").some((c) => c.includes("late")),
      false,
      "nothing to look up yet",
    );
    assertEquals([cidrs("late"), cidrs("nov6"), cidrs("away")], [[], [], []]);
    await t.client.patch(NODES, "late", "merge", { spec: { providerID: "fake://late" } });
    await eventually(() => cidrs("late").length > 0, 5_000);
  });
  assertEquals(
    cidrs("late"),
    ["10.244.0.0/24", "2a01:4f8:c0c:1:1::/80"],
    "the waiting ones held no IPv4 range",
  );
  assertEquals(events().sort(), [
    "away PodCIDROutsideClusterCIDR: No pod CIDRs for Node away: 2001:db8:1:0:1::/80 (of machine fake://away's " +
    "2001:db8:1::/64) is outside --cluster-cidr's IPv6 range 2a01:4f8::/32: widen it to take in the servers' ranges",
    "nov6 NoIPv6Range: No pod CIDRs for Node nov6: machine fake://nov6 has no IPv6 /64 (created without IPv6, or " +
    "its primary IPv6 unassigned): the Node gets no pod CIDRs until it has one",
  ]);
  assert(t.metrics.render().includes('node_ipam_problem_nodes{reason="NoIPv6Range"} 1'), t.metrics.render());
});

Deno.test("node ipam: a full range makes a Node wait until another leaves; a kubelet's own range is kept and a collision named", async () => {
  const { t, node, cidrs, events } = setup(["--cluster-cidr=10.244.0.0/23"]);
  // A kubelet registered its Node with a range of its choosing (hostile or not): kept, taken out of the pool.
  t.apiserver.seed("nodes", node("own", { spec: { podCIDR: "10.244.1.0/24", podCIDRs: ["10.244.1.0/24"] } }));
  t.apiserver.seed("nodes", node("a"));
  await t.runWhile(async () => {
    await eventually(() => cidrs("a").length > 0, 5_000);
    assertEquals(cidrs("a"), ["10.244.0.0/24"], "own's range is not handed out again");
    await t.client.create(NODES, node("b"));
    await eventually(() => events().some((e) => e.startsWith("b CIDRNotAvailable")), 5_000);
    // Another kubelet registers with a's range: a keeps it, the collision is named.
    await t.client.create(
      NODES,
      node("copy", { spec: { podCIDR: "10.244.0.0/24", podCIDRs: ["10.244.0.0/24"] } }),
    );
    await eventually(() => events().some((e) => e.startsWith("copy PodCIDRConflict")), 5_000);
    await t.client.delete(NODES, "own");
    await eventually(() => cidrs("b").length > 0, 5_000);
  });
  assertEquals(cidrs("b"), ["10.244.1.0/24"], "the range own freed");
  assert(
    events().includes(
      "copy PodCIDRConflict: Node copy's pod CIDR 10.244.0.0/24 is also Node a's (set when the Node was registered): " +
        "pods of the two collide; the range stays Node a's in the allocator",
    ),
    events().join("\n"),
  );
});

/** Sets Node `name`'s pod CIDRs as `writer` would (the in-memory apiserver keeps the managed fields we send). */
function writeAs(t: ReturnType<typeof setup>["t"], name: string, writer: string, cidr: string) {
  return t.client.patch(NODES, name, "merge", {
    metadata: {
      managedFields: [{ manager: writer, operation: "Update", fieldsV1: { "f:spec": { "f:podCIDRs": {} } } }],
    },
    spec: { podCIDR: cidr, podCIDRs: [cidr] },
  });
}

Deno.test("node ipam: one kubelet setting its own pod CIDRs stops nothing (Q2): kept, taken out of the pool, told on its Node", async () => {
  // R3a: an opted-out Node; R3b: a served Node before it has a provider ID (CloudAllocator waits for it).
  const { t, node, cidrs, events } = setup(["--cluster-cidr=10.244.0.0/16,2a01:4f8::/32"], {
    next: ["2a01:4f8:c0c:a::/64"],
  });
  t.apiserver.seed("nodes", node("rogue", { metadata: { labels: { "node.deno-ccm.io/managed": "false" } } }));
  t.apiserver.seed("nodes", node("early", { spec: {} }));
  await t.runWhile(async () => {
    await new Promise((r) => setTimeout(r, 200));
    await writeAs(t, "rogue", "kubelet", "10.244.200.0/24");
    await writeAs(t, "early", "kube-controller-manager", "10.244.0.0/24");
    await eventually(() => events().some((e) => e.startsWith("early PodCIDRFromOtherWriter")), 5_000);
    await t.client.create(NODES, node("next"));
    await eventually(() => cidrs("next").length > 0, 5_000);
  });
  assertEquals(cidrs("next")[0], "10.244.1.0/24", "early's own range is not handed out again");
  assertEquals(t.conditions.problem(), undefined, "/readyz stays ready");
  assert(
    !events().some((e) => e.startsWith("rogue ")),
    "an opted-out Node is none of the allocator's business",
  );
  assert(!events().some((e) => e.includes("PodCIDRAllocatorConflict")), events().join("\n"));
});

Deno.test("node ipam: pod CIDRs from another writer on three served Nodes stop the allocator (event, /readyz); from another replica of ours they do not", async () => {
  for (const [writer, halts] of [["kube-controller-manager", true], ["deno-ccm", false]] as const) {
    const { t, node, cidrs, events } = setup(["--cluster-cidr=10.244.0.0/16,2a01:4f8::/32"], {
      next: ["2a01:4f8:c0c:a::/64"],
    });
    // Served Nodes that wait for their provider ID (CloudAllocator): another allocator is faster.
    for (const n of ["k1", "k2", "k3"]) t.apiserver.seed("nodes", node(n, { spec: {} }));
    await t.runWhile(async () => {
      await new Promise((r) => setTimeout(r, 200));
      for (const [i, n] of ["k1", "k2", "k3"].entries()) await writeAs(t, n, writer, `10.244.${7 + i}.0/24`);
      if (halts) await eventually(() => events().some((e) => e.includes("PodCIDRAllocatorConflict")), 5_000);
      else await new Promise((r) => setTimeout(r, 300));
      await t.client.create(NODES, node("next"));
      if (!halts) await eventually(() => cidrs("next").length > 0, 5_000);
      else await new Promise((r) => setTimeout(r, 300));
    });
    assertEquals(
      cidrs("next").length === 0,
      halts,
      `${writer}: next ${halts ? "gets nothing" : "gets a range"}`,
    );
    assertEquals(
      !!t.conditions.problem()?.includes(`from "kube-controller-manager", not from deno-ccm`),
      halts,
    );
    assertEquals(events().filter((e) => e.includes("PodCIDRFromOtherWriter")).length, halts ? 2 : 0);
    if (!halts) {
      assert(!["10.244.7.0/24", "10.244.8.0/24"].includes(cidrs("next")[0]), "their ranges are taken");
    }
  }
});

Deno.test("node ipam: a kubelet's range that is not one pool subnet is told, and held only when it lies inside one (Q7)", async () => {
  const { t, node, cidrs, events } = setup(["--cluster-cidr=10.244.0.0/22"]);
  t.apiserver.seed(
    "nodes",
    node("wide", { spec: { podCIDR: "10.244.0.0/16", podCIDRs: ["10.244.0.0/16"] } }),
  );
  t.apiserver.seed(
    "nodes",
    node("narrow", { spec: { podCIDR: "10.244.1.128/25", podCIDRs: ["10.244.1.128/25"] } }),
  );
  t.apiserver.seed("nodes", node("away", { spec: { podCIDR: "10.9.0.0/24", podCIDRs: ["10.9.0.0/24"] } }));
  for (const n of ["a", "b", "c"]) t.apiserver.seed("nodes", node(n));
  await t.runWhile(async () => {
    await eventually(() => ["a", "b", "c"].every((n) => cidrs(n).length > 0), 5_000);
  });
  // The /25 holds its /24; the /16 takes nothing (one kubelet must not empty the pool).
  assertEquals(
    new Set(["a", "b", "c"].map((n) => cidrs(n)[0])),
    new Set(["10.244.0.0/24", "10.244.2.0/24", "10.244.3.0/24"]),
  );
  const told = events().filter((e) => e.includes("PodCIDRNotInPool"));
  assert(told.some((e) => e.startsWith("wide ") && e.includes("overlaps 4 of them")), told.join("\n"));
  assert(
    told.some((e) => e.startsWith("narrow ") && e.includes("the /24 holding it is held")),
    told.join("\n"),
  );
  assert(
    told.some((e) => e.startsWith("away ") && e.includes("outside --cluster-cidr 10.244.0.0/22")),
    told.join("\n"),
  );
});

Deno.test("node ipam: a Node whose machine's /64 changed keeps its range and is told once", async () => {
  const { t, node, cidrs, events, fake } = setup([
    "--cluster-cidr=10.244.0.0/16,2a01:4f8::/32",
    "--node-status-update-frequency=100ms",
  ], { a: ["2a01:4f8:c0c:a::/64"] });
  t.apiserver.seed("nodes", node("a"));
  await t.runWhile(async () => {
    await eventually(() => cidrs("a").length > 0, 5_000);
    fake.machines.get("fake://a")!.cidrs = ["2a01:4f8:c0c:ff::/64"];
    await eventually(() => events().some((e) => e.startsWith("a PodCIDRStale")), 5_000);
    await new Promise((r) => setTimeout(r, 400));
  });
  assertEquals(cidrs("a"), ["10.244.0.0/24", "2a01:4f8:c0c:a:1::/80"], "never rewritten");
  assertEquals(events().filter((e) => e.startsWith("a PodCIDRStale")).length, 1, events().join("\n"));
});
