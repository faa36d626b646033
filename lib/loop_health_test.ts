import { assertEquals } from "../testing/assert.ts";
import { Registry } from "./metrics.ts";
import { Conditions } from "./conditions.ts";
import { LoopHealth } from "./loop_health.ts";

Deno.test("loop health: failures count at once on the gauge, reach /readyz from the third in a row, clear on success", () => {
  const registry = new Registry();
  const conditions = new Conditions();
  const loops = new LoopHealth(registry, conditions);
  loops.failed("firewall", "boom");
  loops.failed("firewall", "boom");
  assertEquals(conditions.problem(), undefined, "two failures are not yet a problem");
  loops.failed("firewall", "the API answered 503");
  assertEquals(conditions.problem(), "firewall: failed 3 times in a row, last: the API answered 503");
  const text = registry.render();
  assertEquals(text.includes('loop_consecutive_failures{loop="firewall"} 3'), true, text);
  loops.ok("firewall");
  assertEquals(conditions.problem(), undefined);
});
