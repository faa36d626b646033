import { assertEquals } from "../../testing/assert.ts";
import { ChangeBudget } from "./change_budget.ts";

Deno.test("change budget: a namespace churning its Services gets a burst, then one sync per refill, each key once", () => {
  let now = 0;
  const budget = new ChangeBudget(3, 1_000, () => now);
  const at = (writer: string, key: string) => budget.admit(writer, key);
  assertEquals([at("a", "a/1"), at("a", "a/2"), at("a", "a/3")].map((x) => x?.delayMs), [0, 0, 0]);
  assertEquals(at("a", "a/1"), { delayMs: 1_000, warn: true }, "held: said once");
  assertEquals(at("a", "a/1"), undefined, "already scheduled: the later sync reads the latest state");
  assertEquals(at("a", "a/2"), { delayMs: 2_000, warn: false }, "the next token, reserved");
  assertEquals(at("b", "b/1")?.delayMs, 0, "another namespace has its own");
  now += 2_000;
  assertEquals(at("a", "a/1")?.delayMs, 1_000, "the tokens that came were reserved");
  now += 10_000;
  assertEquals(at("a", "a/9")?.delayMs, 0);
});
