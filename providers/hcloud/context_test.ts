import { assertEquals, assertThrows } from "../../testing/assert.ts";
import { ConfiguredNetwork, hcloudContext } from "./context.ts";
import type { ActionWaiter, HcloudClient } from "../../hcloud_api/mod.ts";
import type { ServerCache } from "./servers/mod.ts";

Deno.test("hcloud context: frozen; the network is resolved once and read where it is used", () => {
  const ctx = hcloudContext({
    client: {} as HcloudClient,
    cache: {} as ServerCache,
    actions: {} as ActionWaiter,
  });
  assertEquals(Object.isFrozen(ctx), true);
  assertEquals([ctx.network.id, ctx.robotEnabled], [undefined, false]);
  const seen = ctx.network; // what a part keeps at construction
  ctx.network.resolve(42);
  assertEquals(seen.id, 42);
  ctx.network.resolve(42);
  assertThrows(() => ctx.network.resolve(43), Error);
  assertEquals(new ConfiguredNetwork().id, undefined);
});
