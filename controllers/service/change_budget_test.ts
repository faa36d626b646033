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

Deno.test("change budget: a retry pays a token: its backoff, or later when the namespace's budget is spent (Q3)", () => {
  const budget = new ChangeBudget(2, 1_000, () => 0);
  assertEquals(budget.payRetry("a", 5_000), 5_000, "tokens left: the backoff as it is");
  assertEquals(budget.admit("a", "a/1")?.delayMs, 0);
  assertEquals(budget.payRetry("a", 500), 1_000, "spent: the retry waits for its token");
  assertEquals(budget.payRetry("a", 500), 2_000);
  assertEquals(budget.admit("a", "a/2")?.delayMs, 3_000, "retries and changes share one bucket");
});

Deno.test("change budget: buckets that refilled are dropped once 10 000 namespaces were seen (Q13)", () => {
  let now = 0;
  const budget = new ChangeBudget(100, 10_000, () => now);
  for (let i = 0; i < 10_000; i++) budget.admit(`ns${i}`, `ns${i}/s`);
  assertEquals(budget.writers, 10_000);
  budget.admit("busy", "busy/s");
  assertEquals(budget.writers, 10_001, "none full yet: nothing dropped, the new one kept");
  // 200 000 namespaces seen once, one a second: only those of the last refill (1000 s) stay.
  for (let i = 0; i < 200_000; i++) {
    now += 1_000;
    budget.admit(`new${i}`, `new${i}/s`);
  }
  assertEquals(budget.writers <= 20_002, true, `${budget.writers} buckets kept`);
  // A namespace still short of tokens is never dropped: its debt stays.
  now += 10_000;
  for (let i = 0; i < 150; i++) budget.admit("spender", `spender/${i}`);
  for (let i = 0; i < 20_000; i++) budget.admit(`more${i}`, `more${i}/s`);
  assertEquals(budget.admit("spender", "spender/x")!.delayMs > 0, true, "its debt is remembered");
});
