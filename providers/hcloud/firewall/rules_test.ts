import { assert, assertEquals } from "../../../testing/assert.ts";
import { balancerRules, portRanges } from "./rules.ts";

const D = "deno-ccm test";
const ROOM = { entries: 50, effective: 500 };
/** Whether `rules` let `source` reach `port`. */
const opens = (rules: { port: string; source_ips: string[] }[], source: string, port: number) =>
  rules.some((r) => {
    const [lo, hi = lo] = r.port.split("-").map(Number);
    return port >= lo && port <= hi && r.source_ips.includes(`${source}/32`);
  });

Deno.test("firewall rules: ports grouped into ranges, every balancer a source, one rule per range", () => {
  assertEquals(portRanges([30080, 30081, 30082, 31000, 30080]), [[30080, 30082], [31000, 31000]]);
  const { rules, leftOut } = balancerRules(
    [
      { source: "198.51.100.1", ports: [30080, 30081] },
      { source: "198.51.100.2", ports: [31000, 10256] },
      { source: "198.51.100.3", ports: [] }, // a balancer with no service yet opens nothing
    ],
    ROOM,
    D,
  );
  assertEquals(rules.map((r) => [r.port, r.source_ips]), [
    ["10256", ["198.51.100.1/32", "198.51.100.2/32"]],
    ["30080-30081", ["198.51.100.1/32", "198.51.100.2/32"]],
    ["31000", ["198.51.100.1/32", "198.51.100.2/32"]],
  ]);
  assertEquals(leftOut, []);
  assertEquals(rules.every((r) => r.direction === "in" && r.protocol === "tcp" && r.description === D), true);
  assertEquals(balancerRules([], ROOM, D), { rules: [], leftOut: [] });
});

Deno.test("firewall rules: more ranges than room merge the closest, never more than the room", () => {
  const ports = Array.from({ length: 80 }, (_, i) => 30000 + i * 10); // 80 separate ports
  const { rules } = balancerRules([{ source: "198.51.100.1", ports }], { entries: 45, effective: 500 }, D);
  assertEquals(rules.length, 45);
  assertEquals(ports.every((p) => opens(rules, "198.51.100.1", p)), true, "every port is still covered");
  // Effective rules bind too: 120 balancers in two chunks of sources, 500 effective → 4 ranges.
  const many = Array.from({ length: 120 }, (_, i) => ({ source: `10.0.${i >> 8}.${i & 255}`, ports }));
  const wide = balancerRules(many, ROOM, D).rules;
  assertEquals(wide.length, 2 * 4);
  assertEquals(Math.max(...wide.map((r) => r.source_ips.length)), 100);
  assertEquals(wide.reduce((n, r) => n + r.source_ips.length, 0) <= 500, true);
});

Deno.test("firewall rules: a co-managed balancer gets its own rules, for its own ports only (Q5)", () => {
  const { rules } = balancerRules(
    [
      { source: "198.51.100.1", ports: [30080, 22] }, // a tenant's balancer, health-check-port 22
      { source: "198.51.100.2", ports: [31000] },
      { source: "203.0.113.9", ports: [30500], exclusive: true, name: "terraform-lb" }, // co-managed
    ],
    ROOM,
    D,
  );
  // Before: port 22 was open from every balancer, the co-managed one (carrying Terraform's 2222 → 22) too.
  assertEquals(opens(rules, "203.0.113.9", 22), false);
  assertEquals(opens(rules, "203.0.113.9", 30080), false, "nor another Service's port");
  assertEquals(opens(rules, "203.0.113.9", 30500), true);
  assertEquals(opens(rules, "198.51.100.1", 30500), false, "the co-managed port is its own");
  assertEquals([opens(rules, "198.51.100.1", 22), opens(rules, "198.51.100.2", 31000)], [true, true]);
});

Deno.test("firewall rules: one balancer too many still writes: those allowed now first, the rest named (Q6)", () => {
  const many = Array.from(
    { length: 501 },
    (_, i) => ({ source: `10.1.${i >> 8}.${i & 255}`, ports: [30080], name: `lb-${i}` }),
  );
  // The firewall allows the first 500 now (and a deleted balancer's address, which is not among them).
  const allowed = new Set([...many.slice(0, 500).map((o) => `${o.source}/32`), "10.9.9.9/32"]);
  const { rules, leftOut } = balancerRules(many, ROOM, D, allowed);
  assertEquals(leftOut, ["lb-500"], "the newest, named");
  assertEquals(many.slice(0, 500).every((o) => opens(rules, o.source, 30080)), true, "nobody loses access");
  assertEquals(opens(rules, "10.9.9.9", 30080), false, "a deleted balancer's address is gone");
  assert(rules.length <= 50 && rules.reduce((n, r) => n + r.source_ips.length, 0) <= 500);
  // No room at all: nothing of ours, everyone named; the operator's rules stay (the caller's part).
  const none = balancerRules(
    [{ source: "1.2.3.4", ports: [1], name: "x" }],
    { entries: 0, effective: 500 },
    D,
  );
  assertEquals(none, { rules: [], leftOut: ["x"] });
});
