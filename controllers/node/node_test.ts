/**
 * The node and node lifecycle controllers against the fake provider and an in-memory apiserver.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { nodeController } from "./node.ts";
import { nodeLifecycleController } from "../node_lifecycle/mod.ts";
import { hasTaint, SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../node_metadata.ts";

function node(name: string, options: { ready?: boolean; uninitialized?: boolean; providerID?: string } = {}) {
  return {
    metadata: { name },
    spec: {
      providerID: options.providerID,
      taints: options.uninitialized
        ? [{ key: UNINITIALIZED_TAINT, value: "true", effect: "NoSchedule" as const }]
        : [],
    },
    status: { conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }] },
  };
}

Deno.test("node controller (fake provider): an uninitialized Node gets provider ID, labels, addresses, and loses the taint", async () => {
  const fake = new FakeProvider();
  fake.addMachine("a", { nodeAddresses: [{ type: "InternalIP", address: "10.0.0.5" }], instanceType: "big" });
  const t = newController(nodeController, fake);
  t.apiserver.seed("nodes", node("a", { uninitialized: true }));
  t.apiserver.seed("nodes", node("stranger", { uninitialized: true }));
  await t.runFor(300);
  const a = t.apiserver.object<Node>("nodes", "a")!;
  assertEquals(a.spec?.providerID, "fake://a");
  assertEquals(hasTaint(a, UNINITIALIZED_TAINT), false);
  assertEquals(a.metadata?.labels?.["node.kubernetes.io/instance-type"], "big");
  assertEquals(a.metadata?.labels?.["topology.kubernetes.io/zone"], "zone-a");
  assertEquals(a.status?.addresses, [{ type: "InternalIP", address: "10.0.0.5" }]);
  const stranger = t.apiserver.object<Node>("nodes", "stranger")!;
  assertEquals(hasTaint(stranger, UNINITIALIZED_TAINT), true, "no machine: the taint stays");
});

Deno.test("node controller (fake provider): a Node whose machine appears later is initialized by a direct sync of its key, no period waited", async () => {
  const fake = new FakeProvider();
  const t = newController(nodeController, fake);
  t.apiserver.seed("nodes", node("late", { uninitialized: true }));
  await t.run(async () => {
    assertEquals(
      hasTaint(t.apiserver.object<Node>("nodes", "late")!, UNINITIALIZED_TAINT),
      true,
      "no machine yet",
    );
    fake.addMachine("late");
    await t.sync("cloud-node", "late");
    const late = t.apiserver.object<Node>("nodes", "late")!;
    assertEquals([late.spec?.providerID, hasTaint(late, UNINITIALIZED_TAINT)], ["fake://late", false]);
  });
});

Deno.test("node lifecycle (fake provider): shutdown taint on a stopped machine; a NotReady Node without one is deleted", async () => {
  const fake = new FakeProvider();
  fake.addMachine("off", { shutdown: true });
  fake.addMachine("up");
  fake.addMachine("ok");
  const t = newController(nodeLifecycleController, fake, ["--node-monitor-period=50ms"]);
  t.apiserver.seed("nodes", node("off", { ready: false, providerID: "fake://off" }));
  t.apiserver.seed("nodes", node("gone", { ready: false, providerID: "fake://gone" }));
  t.apiserver.seed("nodes", node("up", { providerID: "fake://up" }));
  t.apiserver.seed("nodes", node("ok", { providerID: "fake://ok" }));
  await t.runFor(300);
  assertEquals(hasTaint(t.apiserver.object<Node>("nodes", "off")!, SHUTDOWN_TAINT), true);
  assertEquals(t.apiserver.object("nodes", "gone"), undefined, "deleted");
  assertEquals(t.apiserver.objects("nodes").length, 3);
  assertEquals(
    fake.calls.some((c) => c.endsWith(" up") || c.endsWith(" ok")),
    true,
    "before a deletion the cloud must still show a Ready Node's machine",
  );
});
