/**
 * Hybrid clusters (HCCM #789, #641, #7): a Node labelled `node.deno-ccm.io/managed=false` is not the
 * cloud's, and every controller leaves it alone: no lookup, no initialization, no deletion when
 * NotReady, no route (and a route through it is kept), no balancer target, no CSR decision, no event.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { newController } from "../testing/controller_harness.ts";
import { FakeProvider } from "../providers/fake/fake_provider.ts";
import { nodeController } from "./node/mod.ts";
import { nodeLifecycleController } from "./node_lifecycle/mod.ts";
import { routeController } from "./route/mod.ts";
import { eligibleNode } from "./service/mod.ts";
import { managedNode } from "./node_metadata.ts";
import { MANAGED_LABEL, UNINITIALIZED_TAINT } from "../kube/well_known.ts";

/** A kubelet-registered Node: uninitialized, with an InternalIP and a pod CIDR. */
function node(name: string, ip: string, cidr: string, labels: Record<string, string> = {}): Node {
  return {
    metadata: { name, labels },
    spec: {
      podCIDR: cidr,
      podCIDRs: [cidr],
      taints: [{ key: UNINITIALIZED_TAINT, value: "true", effect: "NoSchedule" }],
    },
    status: {
      addresses: [{ type: "InternalIP", address: ip }],
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
}

const HOME = { [MANAGED_LABEL]: "false" };

Deno.test("unmanaged Nodes: the label reads as Go's false; anything else, or none, is managed", () => {
  const labelled = (value?: string): Node => ({
    metadata: { labels: value === undefined ? {} : { [MANAGED_LABEL as string]: value } },
  });
  assertEquals(["false", "0", "F", "False"].map((v) => managedNode(labelled(v))), [
    false,
    false,
    false,
    false,
  ]);
  assertEquals(["true", "yes", "", "no"].map((v) => managedNode(labelled(v))), [true, true, true, true]);
  assertEquals(managedNode(labelled()), true);
  assertEquals(eligibleNode({ ...labelled("false"), spec: {} }), false, "never a balancer target");
});

Deno.test("unmanaged Nodes: never looked up or initialized; the cloud's Nodes beside them are", async () => {
  const fake = new FakeProvider();
  fake.addMachine("cloud-1");
  // A machine of the same name exists: the label still wins (a home box named like a server).
  fake.addMachine("home-1");
  const t = newController(nodeController, fake);
  t.apiserver.seed("nodes", node("cloud-1", "10.0.0.2", "10.244.0.0/24"));
  t.apiserver.seed("nodes", node("home-1", "192.168.1.5", "10.244.1.0/24", HOME));
  await t.runFor(500);
  assertEquals(fake.calls.filter((c) => c.includes("home-1")), []);
  const home = t.apiserver.object<Node>("nodes", "home-1")!;
  assertEquals(home.spec?.providerID, undefined);
  assertEquals(
    home.spec?.taints?.map((x) => x.key),
    [UNINITIALIZED_TAINT],
    "its own tooling lifts the taint",
  );
  assert(t.apiserver.object<Node>("nodes", "cloud-1")!.spec?.providerID, "the cloud's Node is initialized");
  const events = t.apiserver.objects<{ involvedObject?: { name?: string } }>("events");
  assertEquals(events.filter((e) => e.involvedObject?.name === "home-1"), []);
});

Deno.test("unmanaged Nodes: a NotReady one is never deleted, checked or counted by the lifecycle", async () => {
  const fake = new FakeProvider();
  fake.addMachine("cloud-1");
  const t = newController(nodeLifecycleController, fake, ["--node-monitor-period=50ms"]);
  t.apiserver.seed(
    "nodes",
    <Node> {
      metadata: { name: "cloud-1" },
      spec: { providerID: "fake://cloud-1" },
      status: { conditions: [{ type: "Ready", status: "True" }] },
    },
  );
  // NotReady, with no machine anywhere, and once with a provider ID of another cloud.
  for (const [name, providerID] of [["home-1", undefined], ["home-2", "othercloud://7"]] as const) {
    t.apiserver.seed(
      "nodes",
      <Node> {
        metadata: { name, labels: HOME },
        spec: providerID ? { providerID } : {},
        status: { conditions: [{ type: "Ready", status: "False" }] },
      },
    );
  }
  await t.runFor(400);
  assertEquals(t.apiserver.objects<Node>("nodes").map((n) => n.metadata!.name).sort(), [
    "cloud-1",
    "home-1",
    "home-2",
  ]);
  assertEquals(fake.calls.filter((c) => c.includes("home-")), []);
  assertEquals(t.apiserver.objects("events"), []);
});

Deno.test("unmanaged Nodes: no route for them, and a route through one is left as it is", async () => {
  const fake = new FakeProvider();
  fake.addMachine("cloud-1");
  // The home box's owner routes its pods through it already (a VPN, a vSwitch).
  fake.routeTable.set("10.244.1.0/24", {
    name: "home",
    targetNode: "",
    targetNodeAddresses: [{ type: "InternalIP", address: "192.168.1.5" }],
    destinationCIDR: "10.244.1.0/24",
  });
  const t = newController(routeController, fake, [
    "--cluster-cidr=10.244.0.0/16",
    "--route-reconciliation-period=100ms",
  ]);
  const cloud = node("cloud-1", "10.0.0.2", "10.244.0.0/24");
  cloud.spec!.providerID = "fake://cloud-1";
  cloud.spec!.taints = [];
  t.apiserver.seed("nodes", cloud);
  t.apiserver.seed("nodes", node("home-1", "192.168.1.5", "10.244.1.0/24", HOME));
  t.apiserver.seed("nodes", node("home-2", "192.168.1.6", "10.244.2.0/24", HOME));
  await t.runFor(500);
  assertEquals([...fake.routeTable.keys()].sort(), ["10.244.0.0/24", "10.244.1.0/24"]);
  assertEquals(fake.calls.filter((c) => c.startsWith("create-route") || c.startsWith("delete-route")), [
    "create-route 10.244.0.0/24",
  ]);
  const homeCondition = t.apiserver.object<Node>("nodes", "home-2")?.status?.conditions?.find((c) =>
    c.type === "NetworkUnavailable"
  );
  assertEquals(homeCondition, undefined, "its network condition is its own");
  assertEquals(t.apiserver.objects("events"), []);
});

Deno.test("unmanaged Nodes: a stale route through an address one claims is deleted unless it carries that Node's own pod CIDR (Q8)", async () => {
  const fake = new FakeProvider();
  const via = (name: string, cidr: string, address: string) =>
    fake.routeTable.set(cidr, {
      name,
      targetNode: "",
      targetNodeAddresses: [{ type: "InternalIP", address }],
      destinationCIDR: cidr,
    });
  via("own", "10.244.1.0/24", "10.0.0.9"); // the opted-out Node's own range: kept
  via("stale", "10.244.9.0/24", "10.0.0.9"); // another range through the address it claims: stale
  const t = newController(routeController, fake, [
    "--cluster-cidr=10.244.0.0/16",
    "--route-reconciliation-period=100ms",
  ]);
  // A kubelet opted its Node out and reports another server's address as its InternalIP.
  t.apiserver.seed("nodes", node("pinner", "10.0.0.9", "10.244.1.0/24", HOME));
  await t.runFor(500);
  assertEquals([...fake.routeTable.keys()].sort(), ["10.244.1.0/24"]);
  assertEquals(fake.calls.filter((c) => c.startsWith("delete-route")), ["delete-route 10.244.9.0/24"]);
});
