import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { EXCLUDE_LABEL, NodeSetMemory } from "./service_nodes.ts";

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
