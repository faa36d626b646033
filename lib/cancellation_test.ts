import { assertEquals } from "../testing/assert.ts";
import { currentSignal, detached, withCurrent, withSignal } from "./cancellation.ts";

Deno.test("cancellation: the bound signal reaches awaited work, nests, and detached work runs without it", async () => {
  const outer = new AbortController();
  const inner = new AbortController();
  assertEquals(currentSignal(), undefined);
  await withSignal(outer.signal, async () => {
    await new Promise((r) => setTimeout(r, 1));
    assertEquals(currentSignal(), outer.signal);
    await withSignal(inner.signal, async () => {
      await Promise.resolve();
      const both = currentSignal()!;
      assertEquals(both.aborted, false);
      outer.abort("outer");
      assertEquals(both.aborted, true, "either signal ends nested work");
    });
    assertEquals(
      await detached(async () => {
        await new Promise((r) => setTimeout(r, 1));
        return currentSignal();
      }),
      undefined,
    );
    const request = new AbortController();
    const combined = withCurrent(request.signal);
    assertEquals(combined.aborted, true, "a request made under an aborted signal is aborted");
  });
  assertEquals(withSignal(undefined, () => currentSignal()), undefined);
});
