import { assertEquals, assertRejects } from "../testing/assert.ts";
import { HcloudClient } from "./client.ts";
import { ActionWaiter } from "./action_waiter.ts";
import { withSignal } from "../lib/cancellation.ts";

Deno.test("action waiter: a cancelled waiter leaves at once; the shared poll goes on for the others", async () => {
  let polls = 0;
  const fetch = (r: Request) => {
    polls++;
    const ids = new URL(r.url).searchParams.getAll("id").map(Number);
    // Action 1 runs until the third poll; action 2 never finishes.
    const actions = ids.map((id) => ({
      id,
      command: "x",
      status: id === 1 && polls >= 3 ? "success" : "running",
    }));
    return Promise.resolve(Response.json({ actions }));
  };
  const waiter = new ActionWaiter(
    new HcloudClient({ endpoint: "http://127.0.0.1:1/v1", token: "t", fetch }),
    { intervalMs: 10 },
  );
  const work = new AbortController();
  // The cancelled caller starts the shared loop: it must keep serving the other waiter.
  const cancelled = withSignal(work.signal, () => waiter.wait({ id: 2, status: "running" }));
  const other = waiter.wait({ id: 1, status: "running" });
  setTimeout(() => work.abort(new Error("shutting down")), 5);
  assertEquals((await assertRejects(() => cancelled, Error)).message, "shutting down");
  await other;
  assertEquals(polls >= 3, true);
  const before = polls;
  await new Promise((r) => setTimeout(r, 50));
  assertEquals(polls, before, "nobody waits any more: the loop ended");
  const late = await assertRejects(
    () => withSignal(work.signal, () => waiter.wait({ id: 3, status: "running" })),
    Error,
  );
  assertEquals(late.message, "shutting down");
});
