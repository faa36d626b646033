/**
 * The node lifecycle controller's deletion breaker against the fake provider and an in-memory
 * apiserver: many NotReady Nodes gone at once are deleted only when the cloud still shows the Ready
 * Nodes' machines.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { nodeLifecycleController } from "./node_lifecycle.ts";
import { eventually } from "../../testing/helpers.ts";

function node(name: string, ready: boolean): Node {
  return {
    metadata: { name },
    spec: { providerID: `fake://${name}` },
    status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
  };
}

/** Five Nodes: `ready` of them Ready with machines, the rest NotReady with no machine left. */
async function afterOnePeriod(ready: number, options: { readyMachinesGone?: boolean } = {}) {
  const fake = new FakeProvider();
  const t = newController(nodeLifecycleController, fake, ["--node-monitor-period=50ms"]);
  for (let i = 0; i < 5; i++) {
    const name = `n-${i}`;
    if (i < ready && !options.readyMachinesGone) fake.addMachine(name);
    t.apiserver.seed("nodes", node(name, i < ready));
  }
  await t.runFor(300);
  const readyAsked = fake.calls.filter((c) =>
    Array.from({ length: ready }, (_, i) => ` n-${i}`).some((n) => c.endsWith(n))
  );
  return { left: t.apiserver.objects<Node>("nodes").map((n) => n.metadata!.name!).sort(), readyAsked };
}

Deno.test("node lifecycle: 3 of 5 Nodes gone while the Ready Nodes' machines are shown → deleted", async () => {
  const { left, readyAsked } = await afterOnePeriod(2);
  assertEquals(left, ["n-0", "n-1"]);
  assertEquals(readyAsked.length > 0, true, "the Ready Nodes were asked about");
});

Deno.test("node lifecycle: 3 of 5 Nodes gone and the Ready Nodes' machines missing too → nothing deleted", async () => {
  assertEquals((await afterOnePeriod(2, { readyMachinesGone: true })).left, [
    "n-0",
    "n-1",
    "n-2",
    "n-3",
    "n-4",
  ]);
});

Deno.test("node lifecycle: every Node NotReady and 5 of 5 gone (nothing to corroborate) → nothing deleted", async () => {
  assertEquals((await afterOnePeriod(0)).left, ["n-0", "n-1", "n-2", "n-3", "n-4"]);
});

Deno.test("node lifecycle: 1 of 5 gone while the Ready Nodes' machines are shown → deleted", async () => {
  const { left, readyAsked } = await afterOnePeriod(4);
  assertEquals(left, ["n-0", "n-1", "n-2", "n-3"]);
  assertEquals(readyAsked.length > 0, true, "the Ready Nodes were asked about (one shared list in hcloud)");
});

Deno.test("node lifecycle: 2 of 5 gone (a minority) while the cloud hides the Ready Nodes' machines → nothing deleted (probe O2)", async () => {
  assertEquals((await afterOnePeriod(3, { readyMachinesGone: true })).left, [
    "n-0",
    "n-1",
    "n-2",
    "n-3",
    "n-4",
  ]);
});

Deno.test("node lifecycle: the only Node NotReady and gone (nothing to ask) → deleted", async () => {
  const fake = new FakeProvider();
  const t = newController(nodeLifecycleController, fake, ["--node-monitor-period=50ms"]);
  t.apiserver.seed("nodes", node("alone", false));
  await t.runFor(300);
  assertEquals(t.apiserver.objects<Node>("nodes").length, 0);
});

Deno.test("node lifecycle: held Nodes are not read again on every pass while the cloud is disbelieved", async () => {
  const fake = new FakeProvider();
  const t = newController(nodeLifecycleController, fake, ["--node-monitor-period=20ms"]);
  for (let i = 0; i < 5; i++) t.apiserver.seed("nodes", node(`n-${i}`, i < 2));
  // The Ready Nodes' machines are missing too: the cloud is not believed, deletions are held.
  await t.runFor(400);
  const readsOf = (name: string) =>
    fake.callsOf("instance-exists").filter((c) => c.endsWith(` ${name}`)).length;
  assertEquals(t.apiserver.objects<Node>("nodes").length, 5, "held");
  // About 20 passes ran: a held Node's server was read when it was first found gone, not on each
  // pass; the first held one by name is read on each pass, to see servers come back.
  assertEquals(readsOf("n-3"), 1, `n-3 read ${readsOf("n-3")}×`);
  assertEquals(readsOf("n-4"), 1);
  assert(readsOf("n-2") > 5, `the first held Node is read on each pass (${readsOf("n-2")}×)`);
});

Deno.test("node lifecycle: a cloud believed a moment ago is not believed for a mass vanishing with no Ready Node left", async () => {
  const { fake, t } = fiveReady();
  await t.runWhile(async () => {
    await leaverDeleted(t);
    // Within the belief's 30 s: every Node goes NotReady and every server vanishes (a wrong project).
    for (let i = 0; i < 5; i++) {
      fake.machines.clear();
      t.apiserver.seed("nodes", node(`n-${i}`, false));
    }
    await new Promise((r) => setTimeout(r, 300));
  });
  assertEquals(t.apiserver.objects<Node>("nodes").length, 5, "nothing deleted on an earlier answer");
});

Deno.test("node lifecycle: a minority going NotReady on an emptied cloud soon after a deletion is asked about afresh (probe P8)", async () => {
  const { fake, t } = fiveReady();
  await t.runWhile(async () => {
    await leaverDeleted(t);
    // A few monitor periods later (the probe: 15 s, under the old 30 s belief), two of five go
    // NotReady and the cloud shows no server at all (another project's token).
    await new Promise((r) => setTimeout(r, 100));
    fake.machines.clear();
    for (const i of [3, 4]) t.apiserver.seed("nodes", node(`n-${i}`, false));
    await new Promise((r) => setTimeout(r, 300));
  });
  assertEquals(t.apiserver.objects<Node>("nodes").length, 5, "held: the Ready Nodes' servers are gone too");
});

Deno.test("node lifecycle: the cloud emptied within a monitor period of a believed answer is asked about afresh, never believed on that answer (probe P8, CI13)", async () => {
  // A long period: the pass after the leaver's deletion comes a whole period later, still within
  // the old answer's period (the window a time-based belief left open).
  const { fake, t } = fiveReady("1s");
  // The pass that believes the cloud reads it slowly (a full server list), the next one quickly (a
  // warm cache): the next pass's question comes less than a period after the answer.
  fake.delayMs = 100;
  await t.runWhile(async () => {
    await leaverDeleted(t);
    fake.delayMs = 0;
    fake.machines.clear();
    for (const i of [3, 4]) t.apiserver.seed("nodes", node(`n-${i}`, false));
    await eventually(() => t.metrics.gauge("node_lifecycle_deletions_held", "").get() === 2, 5_000);
  });
  assertEquals(
    t.apiserver.objects<Node>("nodes").length,
    5,
    "held: nothing deleted on the last pass's answer",
  );
});

/** Five Ready Nodes with machines and a NotReady one without (deleted, the cloud believed). */
function fiveReady(period = "20ms") {
  const fake = new FakeProvider();
  const t = newController(nodeLifecycleController, fake, [`--node-monitor-period=${period}`]);
  for (let i = 0; i < 5; i++) {
    fake.addMachine(`n-${i}`);
    t.apiserver.seed("nodes", node(`n-${i}`, true));
  }
  t.apiserver.seed("nodes", node("leaver", false));
  return { fake, t };
}

/** Waits for the legitimate deletion of `leaver`. */
async function leaverDeleted(t: ReturnType<typeof fiveReady>["t"]): Promise<void> {
  await eventually(
    () => !t.apiserver.objects<Node>("nodes").some((n) => n.metadata?.name === "leaver"),
    2_000,
  );
}

Deno.test("node lifecycle: a kubelet's confirm-deletion on its own Node deletes nothing while its server exists, or it is Ready", async () => {
  const fake = new FakeProvider();
  fake.addMachine("alive");
  const t = newController(nodeLifecycleController, fake, ["--node-monitor-period=50ms"]);
  const confirmed = (name: string, ready: boolean): Node => ({
    ...node(name, ready),
    metadata: { name, annotations: { "node.deno-ccm.io/confirm-deletion": "true" } },
  });
  t.apiserver.seed("nodes", confirmed("alive", false)); // NotReady, server still there
  t.apiserver.seed("nodes", confirmed("ready-gone", true)); // Ready, no server: not the lifecycle's
  await t.runFor(300);
  assertEquals(t.apiserver.objects<Node>("nodes").map((n) => n.metadata!.name!).sort(), [
    "alive",
    "ready-gone",
  ]);
  assert(fake.calls.some((c) => c.endsWith(" alive")), "the NotReady Node's server was looked up as always");
});

Deno.test("node lifecycle: servers vanishing at once, some answered from older data in that pass, are held together, never a minority deleted", async () => {
  const fake = new FakeProvider();
  const t = newController(nodeLifecycleController, fake, ["--node-monitor-period=30ms"]);
  for (let i = 0; i < 5; i++) {
    fake.addMachine(`n-${i}`);
    t.apiserver.seed("nodes", node(`n-${i}`, false));
  }
  // n-0 and n-1 are answered once more from data read before the vanishing (a snapshot a moment
  // before it expired), the others from data read after it: 2 of 5 would look like a minority.
  const stale = new Set<string>();
  const exists = fake.instances.instanceExists;
  fake.instances.instanceExists = (n, signal) =>
    stale.delete(n.metadata!.name!) ? Promise.resolve(true) : exists(n, signal);
  await t.runWhile(async () => {
    await new Promise((r) => setTimeout(r, 100));
    stale.add("n-0").add("n-1");
    for (let i = 0; i < 4; i++) fake.machines.delete(`fake://n-${i}`);
    await eventually(() => t.metrics.gauge("node_lifecycle_deletions_held", "").get() === 4, 2_000);
    await new Promise((r) => setTimeout(r, 100));
  });
  assertEquals(t.apiserver.objects<Node>("nodes").length, 5, "nothing deleted: 4 of 5 vanished at once");
  assertEquals(stale.size, 0, "the stale answers were given");
});
