import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { EXCLUDE_LABEL, leavingSince, NodeSetMemory } from "./nodes.ts";

function node(name: string, labels: Record<string, string> = {}): Node {
  return {
    metadata: { name, labels },
    spec: { providerID: `hcloud://${name.length}` },
    status: { conditions: [{ type: "Ready", status: "True" }] },
  };
}

Deno.test("node-set memory: the eligible set is listed once per Node change; syncs and shared work remembered", () => {
  let nodes = [node("a"), node("b", { [EXCLUDE_LABEL]: "" })];
  let lists = 0;
  const memory = new NodeSetMemory(() => (lists++, nodes));
  const first = memory.eligible();
  assertEquals(first.nodes.map((n) => n.metadata!.name), ["a"], "excluded Nodes are not eligible");
  assertEquals(memory.eligible(), first);
  assertEquals(lists, 1, "listed once until a Node changes");

  memory.synced("default/web", first.set);
  assertEquals(memory.syncedWith("default/web"), first.set);
  assertEquals(memory.needsSharedWork(first.set), true);
  memory.sharedWorkDone(first.set);
  assertEquals(memory.needsSharedWork(first.set), false);

  nodes = [node("a"), node("c")];
  memory.nodesChanged();
  const second = memory.eligible();
  assertEquals([lists, second.nodes.length], [2, 2]);
  assertEquals(second.set === first.set, false);
  assertEquals(memory.needsSharedWork(second.set), true, "a new set needs the shared work again");
  memory.forget("default/web");
  assertEquals(memory.syncedWith("default/web"), undefined);
});

Deno.test("leaving since: the autoscaler's taint (value or timeAdded) and a deletion tell when; an exclude label tells nothing", () => {
  const taint = (value?: string, timeAdded?: string) => ({
    ...node("x"),
    spec: { taints: [{ key: "ToBeDeletedByClusterAutoscaler", value, timeAdded, effect: "NoSchedule" }] },
  });
  assertEquals(leavingSince(taint("1700000000")), 1_700_000_000_000);
  assertEquals(leavingSince(taint("soon")), undefined, "not a time");
  assertEquals(leavingSince(taint("", "2026-11-26T01:00:00Z")), Date.parse("2026-11-26T01:00:00Z"));
  const deleted = {
    ...taint("1700000000"),
    metadata: { name: "x", deletionTimestamp: "2023-11-14T22:00:00Z" },
  };
  assertEquals(leavingSince(deleted), Date.parse("2023-11-14T22:00:00Z"), "the earlier of the two");
  assertEquals(
    leavingSince({ ...taint("1700000000"), metadata: { name: "x", labels: { [EXCLUDE_LABEL]: "true" } } }),
    undefined,
  );
  assertEquals(
    leavingSince({ ...taint("1700000000"), metadata: { name: "x", labels: { [EXCLUDE_LABEL]: "false" } } }),
    1_700_000_000_000,
  );
  assertEquals(leavingSince(node("y")), undefined);
});

Deno.test("node-set memory: node syncs are paced only in clusters of 1000 Nodes or more, by their size", () => {
  const paceAt = (count: number) => {
    const memory = new NodeSetMemory(() => Array.from({ length: count }, (_, i) => node(`n${i}`)));
    assertEquals(memory.syncPaceMs(), 0, "nothing listed yet: not paced");
    memory.eligible();
    return memory.syncPaceMs();
  };
  assertEquals([paceAt(3), paceAt(999), paceAt(1000), paceAt(5000), paceAt(300_000)], [
    0,
    0,
    50,
    250,
    10_000,
  ]);
});
