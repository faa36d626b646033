import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { NodeChangeGuard } from "./node_change_guard.ts";
import { eligibleNode } from "./nodes.ts";

const EXCLUDE = "node.kubernetes.io/exclude-from-external-load-balancers";
const node = (labels: Record<string, string>, deleted = false): Node => ({
  metadata: { name: "w1", labels, ...(deleted ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
});

for (
  const [label, out] of [[EXCLUDE, "true"], ["node.deno-ccm.io/managed", "false"]] as const
) {
  Deno.test(`node change guard: a kubelet flapping ${label} gets a burst, then one change per refill (probe P4)`, () => {
    flapping(label, out);
  });
}

/** 60 flips of `label` (to `out`, which takes the Node out of every balancer, and back). */
function flapping(label: string, out: string): void {
  let now = 0;
  const guard = new NodeChangeGuard(4, 15 * 60_000, () => now);
  const seen: boolean[] = [];
  const held: number[] = [];
  // 60 flips, one a second: what the probe's kubelet did.
  for (let i = 0; i <= 60; i++) {
    const view = guard.view([node(i % 2 ? { [label]: out } : {})], false);
    seen.push(eligibleNode(view.nodes[0]));
    held.push(view.held.length);
    now += 1000;
  }
  const changes = seen.filter((v, i) => i > 0 && v !== seen[i - 1]).length;
  assertEquals(changes, 4, "the burst, and nothing more within a minute");
  assertEquals(held.reduce((a, b) => a + b, 0), 1, "one Warning per hold");
  // The Node stops flapping (excluded): it is taken as it is once a token is free again.
  now += 15 * 60_000;
  const later = guard.view([node({ [label]: out })], false);
  assertEquals([eligibleNode(later.nodes[0]), later.nextReleaseMs], [false, undefined]);
}

Deno.test("node change guard: other labels count only where a node-selector reads them; deletion is never held", () => {
  let now = 0;
  const guard = new NodeChangeGuard(1, 60_000, () => now);
  guard.view([node({ a: "1" })], false);
  for (let i = 2; i < 10; i++) {
    const view = guard.view([node({ a: String(i) })], false);
    assertEquals(view.nodes[0].metadata?.labels?.a, String(i), "not counted: no balancer reads it");
  }
  assertEquals(guard.view([node({ a: "x" })], true).nodes[0].metadata?.labels?.a, "x", "the one token");
  const held = guard.view([node({ a: "y" })], true);
  assertEquals([held.nodes[0].metadata?.labels?.a, held.held.length, held.nextReleaseMs], ["x", 1, 60_000]);
  const gone = guard.view([node({ a: "z", [EXCLUDE]: "true" }, true)], true);
  assertEquals(eligibleNode(gone.nodes[0]), false, "a deletion passes");
  now += 60_000;
  assertEquals(guard.view([node({ a: "w" })], true).nodes[0].metadata?.labels?.a, "w");
});

Deno.test("node change guard: deleting and registering the Node again keeps its bucket; held, it stays out (Q14)", () => {
  let now = 0;
  const guard = new NodeChangeGuard(4, 15 * 60_000, () => now);
  /** Whether the balancers see w1 as a target, one look every 30 s for an hour, alternating away and back. */
  const targets: boolean[] = [];
  for (let i = 0; i < 120; i++) {
    const view = guard.view(i % 2 ? [] : [node({})], false);
    targets.push(view.nodes.length === 1 && eligibleNode(view.nodes[0]));
    now += 30_000;
  }
  const changes = targets.filter((v, i) => i > 0 && v !== targets[i - 1]).length;
  // Before: 120 (every look a change). Now: leaving is never held (one change each), and each coming
  // back takes a token: the 4 of the burst, then one per 15 minutes.
  assertEquals(changes <= 2 * (4 + 4), true, `${changes} target changes in an hour`);
  // A Node away longer than a full refill comes back as new.
  now += 60 * 60_000;
  guard.view([], false);
  const back = guard.view([node({})], false);
  assertEquals(eligibleNode(back.nodes[0]), true);
});
