import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { Departures, MAX_DRAIN_MS } from "./service_departures.ts";

const node = (name: string, extra: Partial<Node["metadata"]> = {}): Node => ({
  metadata: { name, ...extra },
});
const names = (nodes: Node[]) => nodes.map((n) => n.metadata!.name).sort();

Deno.test("departures: who left is kept for the period, who came back is forgotten, nobody past 10 minutes", () => {
  let now = 0;
  const d = new Departures(() => now);
  const [a, b, c] = [node("a"), node("b"), node("c")];
  d.observe([a, b, c], [a, b, c]);
  assertEquals(d.any, false, "nobody left yet");
  // c is tainted (still a Node), b is deleted (gone from the list: remembered as last seen).
  const cTainted = node("c", { labels: { tainted: "yes" } });
  now = 1_000;
  d.observe([a], [a, cTainted]);
  assertEquals(names(d.within(5_000)), ["b", "c"]);
  assertEquals(d.within(5_000).find((n) => n.metadata?.name === "c"), cTainted, "the Node as it is now");
  assertEquals(d.nextExpiry(5_000), 5_000);
  // Looking again does not restart the clock; c comes back and is forgotten.
  now = 4_000;
  d.observe([a, cTainted], [a, cTainted]);
  assertEquals(names(d.within(5_000)), ["b"]);
  assertEquals(d.nextExpiry(5_000), 2_000);
  now = 6_000;
  assertEquals(d.within(5_000), [], "b's period is over");
  assertEquals(d.nextExpiry(5_000), undefined);
  assertEquals(names(d.within(60_000)), ["b"], "a longer period still keeps it");
  // The bound: whatever a provider asks for, 10 minutes at most, and then forgotten.
  assertEquals(names(d.within(3_600_000)), ["b"]);
  now = 1_000 + MAX_DRAIN_MS;
  assertEquals(d.within(3_600_000), []);
  d.observe([a, cTainted], [a, cTainted]);
  assertEquals(d.any, false);
});
