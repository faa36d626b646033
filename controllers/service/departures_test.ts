import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { Departures, MAX_DRAIN_MS, SelectionDepartures } from "./departures.ts";

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

Deno.test("departures: on the first look only, a Node whose record says when it started to leave drains for the rest of the period", () => {
  let now = 100_000;
  const d = new Departures(() => now);
  const [a, b, c] = [node("a"), node("b"), node("c")];
  const since = (n: Node) =>
    ({ b: 98_000, c: now - MAX_DRAIN_MS - 1 } as Record<string, number>)[n.metadata!.name!];
  d.observe([a], [a, b, c], since);
  assertEquals(names(d.within(5_000)), ["b"], "b left 2 s ago; c longer ago than any period");
  assertEquals(d.nextExpiry(5_000), 3_000);
  // Later looks record by observation only: a Node that appears already out gets no time.
  now = 101_000;
  const e = node("e");
  d.observe([a], [a, b, c, e], () => now - 500);
  assertEquals(names(d.within(5_000)), ["b"]);
});

Deno.test("selection departures: who left one balancer's selection is kept there for the period while present; the first look records nothing", () => {
  let now = 0;
  const s = new SelectionDepartures(() => now);
  const set = (...x: string[]) => new Set(x);
  assertEquals(s.observe("web", set("a", "b"), set("a", "b", "c"), 5_000), set());
  now = 1_000;
  assertEquals(s.observe("web", set("a"), set("a", "b", "c"), 5_000), set("b"));
  assertEquals(s.observe("db", set("c"), set("a", "b", "c"), 5_000), set(), "another Service is apart");
  assertEquals(s.nextExpiry(5_000), 5_000);
  now = 3_000;
  assertEquals(s.observe("web", set("a"), set("a", "b", "c"), 5_000), set("b"), "the clock is not restarted");
  // b comes back: forgotten; it leaves again: a new period.
  assertEquals(s.observe("web", set("a", "b"), set("a", "b", "c"), 5_000), set());
  now = 4_000;
  assertEquals(s.observe("web", set("a"), set("a", "b", "c"), 5_000), set("b"));
  now = 9_000;
  assertEquals(s.observe("web", set("a"), set("a", "b", "c"), 5_000), set(), "its period is over");
  assertEquals(s.nextExpiry(5_000), undefined);
  // A Node that is no longer present at all (deleted) is not kept, however recent.
  assertEquals(s.observe("web", set("a", "c"), set("a", "c"), 5_000), set());
  assertEquals(s.observe("web", set("a"), set("a"), 5_000), set());
  s.forget("web");
  assertEquals(s.observe("web", set(), set("a"), 5_000), set(), "forgotten: a first look again");
});
