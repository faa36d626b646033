import { assertEquals } from "../../testing/assert.ts";
import { Registry } from "../../lib/metrics.ts";
import { countOperations, OPERATIONS } from "./op_metrics.ts";

Deno.test("operations metric: calls counted under the official CCM's operation names, results unchanged", async () => {
  const registry = new Registry();
  class Part {
    factor = 2;
    instanceMetadata(x: number) {
      return Promise.resolve(x * this.factor);
    }
    instanceExists() {
      return Promise.resolve(true);
    }
  }
  const part = countOperations(new Part(), OPERATIONS.instances, registry);
  assertEquals(await part.instanceMetadata(21), 42);
  await part.instanceMetadata(1);
  await part.instanceExists();
  const text = registry.render();
  assertEquals(
    text.includes('cloud_controller_manager_operations_total{op="hcloud/instancesv2.InstanceMetadata"} 2'),
    true,
    text,
  );
  assertEquals(text.includes('op="hcloud/instancesv2.InstanceExists"} 1'), true, text);
});
