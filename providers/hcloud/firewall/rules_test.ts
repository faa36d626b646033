import { assertEquals, assertThrows } from "../../../testing/assert.ts";
import { balancerRules, portRanges, RulesDoNotFit } from "./rules.ts";

const D = "deno-ccm test";

Deno.test("firewall rules: ports grouped into ranges, every balancer a source, one rule per range", () => {
  assertEquals(portRanges([30080, 30081, 30082, 31000, 30080]), [[30080, 30082], [31000, 31000]]);
  const rules = balancerRules(
    [
      { source: "198.51.100.1", ports: [30080, 30081] },
      { source: "198.51.100.2", ports: [31000, 10256] },
      { source: "198.51.100.3", ports: [] }, // a balancer with no service yet opens nothing
    ],
    { entries: 50, effective: 500 },
    D,
  );
  assertEquals(rules.map((r) => [r.port, r.source_ips]), [
    ["10256", ["198.51.100.1/32", "198.51.100.2/32"]],
    ["30080-30081", ["198.51.100.1/32", "198.51.100.2/32"]],
    ["31000", ["198.51.100.1/32", "198.51.100.2/32"]],
  ]);
  assertEquals(rules.every((r) => r.direction === "in" && r.protocol === "tcp" && r.description === D), true);
  assertEquals(balancerRules([], { entries: 50, effective: 500 }, D), []);
});

Deno.test("firewall rules: more ranges than room merge the closest, never more than the room", () => {
  const ports = Array.from({ length: 80 }, (_, i) => 30000 + i * 10); // 80 separate ports
  const rules = balancerRules([{ source: "198.51.100.1", ports }], { entries: 45, effective: 500 }, D);
  assertEquals(rules.length, 45);
  // Every port is still covered.
  const covered = (p: number) =>
    rules.some((r) => {
      const [lo, hi = lo] = r.port.split("-").map(Number);
      return p >= lo && p <= hi;
    });
  assertEquals(ports.every(covered), true);
  // Effective rules bind too: 120 balancers in two chunks of sources, 500 effective → 4 ranges.
  const many = Array.from({ length: 120 }, (_, i) => ({ source: `10.0.${i >> 8}.${i & 255}`, ports }));
  const wide = balancerRules(many, { entries: 50, effective: 500 }, D);
  assertEquals(wide.length, 2 * 4);
  assertEquals(Math.max(...wide.map((r) => r.source_ips.length)), 100);
  assertEquals(wide.reduce((n, r) => n + r.source_ips.length, 0) <= 500, true);
});

Deno.test("firewall rules: no room at all is refused naming the numbers", () => {
  const many = Array.from(
    { length: 501 },
    (_, i) => ({ source: `10.1.${i >> 8}.${i & 255}`, ports: [30080] }),
  );
  const err = assertThrows(() => balancerRules(many, { entries: 50, effective: 500 }, D), RulesDoNotFit);
  assertEquals(/501 load balancers need 6 rule\(s\)/.test(err.message), true, err.message);
  assertThrows(
    () => balancerRules([{ source: "1.2.3.4", ports: [1] }], { entries: 0, effective: 500 }, D),
    RulesDoNotFit,
  );
});
