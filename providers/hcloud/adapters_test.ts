import { assertEquals, assertRejects } from "../../testing/assert.ts";
import { Registry } from "../../lib/metrics.ts";
import { CloudApiError } from "../../hcloud_api/mod.ts";
import { RetryAfterError } from "../errors.ts";
import type { Instances, LoadBalancerFirewall } from "../provider.ts";
import { adaptFirewall, adaptInstances, operationCounter } from "./adapters.ts";

const node = { metadata: { name: "n1" } };

Deno.test("adapters: calls counted under the official CCM's operation names, answers unchanged", async () => {
  const registry = new Registry();
  const inner: Instances = {
    instanceExists: () => Promise.resolve(true),
    instanceShutdown: () => Promise.resolve(false),
    instanceMetadata: (n, purpose) =>
      Promise.resolve({
        providerID: `hcloud://${n.metadata?.name}-${purpose}`,
        instanceType: "cx22",
        nodeAddresses: [],
      }),
  };
  const instances = adaptInstances(inner, operationCounter(registry));
  assertEquals((await instances.instanceMetadata(node, "initialize"))?.providerID, "hcloud://n1-initialize");
  await instances.instanceMetadata(node);
  assertEquals(await instances.instanceExists(node), true);
  assertEquals(instances.machineRecord, undefined, "a capability the part lacks stays absent");
  const text = registry.render();
  assertEquals(
    text.includes('cloud_controller_manager_operations_total{op="hcloud/instancesv2.InstanceMetadata"} 2'),
    true,
    text,
  );
  assertEquals(text.includes('op="hcloud/instancesv2.InstanceExists"} 1'), true, text);
});

Deno.test("adapters: a part's failures reach the controllers mapped (a busy firewall waits 2 s), its local calls as they are", async () => {
  let poked = 0;
  const inner: LoadBalancerFirewall = {
    sync: () => Promise.reject(new CloudApiError("locked", { status: 423, code: "locked" })),
    watch: (poke) => {
      poked++;
      poke();
    },
  };
  const firewall = adaptFirewall(inner);
  const err = await assertRejects(() => firewall.sync(), RetryAfterError);
  assertEquals(err.retryAfterMs, 2000);
  firewall.watch!(() => {});
  assertEquals([poked, firewall.concerns], [1, undefined]);
});
