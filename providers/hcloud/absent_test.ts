/**
 * The provider says why a part is off in its own settings' names (the controllers name none).
 */
import { assertEquals } from "../../testing/assert.ts";
import { HcloudProvider, readHcloudConfig } from "./mod.ts";

async function provider(env: Record<string, string>): Promise<HcloudProvider> {
  const { config, errors } = await readHcloudConfig({ HCLOUD_TOKEN: "t".repeat(64), ...env });
  assertEquals(errors, []);
  return new HcloudProvider(config);
}

Deno.test("hcloud provider: a part that is off says which setting turns it on", async () => {
  const bare = await provider({});
  assertEquals([bare.routes, bare.absent.routes], [undefined, "HCLOUD_NETWORK is not set"]);
  assertEquals(bare.absent.loadBalancers, undefined, "load balancers are on");
  const off = await provider({
    HCLOUD_NETWORK: "k8s",
    HCLOUD_NETWORK_ROUTES_ENABLED: "false",
    HCLOUD_LOAD_BALANCERS_ENABLED: "false",
  });
  assertEquals(off.absent, {
    loadBalancers: "HCLOUD_LOAD_BALANCERS_ENABLED=false",
    routes: "HCLOUD_NETWORK_ROUTES_ENABLED=false",
  });
  const on = await provider({ HCLOUD_NETWORK: "k8s" });
  assertEquals(on.absent, { loadBalancers: undefined, routes: undefined });
});
