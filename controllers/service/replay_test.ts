/**
 * One seed replays a run (issue 60 item 1): the service controller on the fake clock from a fixed
 * start, the fake provider and the in-memory apiserver, the process's randomness seeded: two runs
 * of one seed make the same cloud calls and the same Kubernetes requests in the same order (event
 * names included, which carry the clock and a random suffix); another seed makes other event names.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { seedProcessRandom } from "../../lib/random.ts";
import { NODES, SERVICES } from "../../kube/resources.ts";
import { serviceController } from "./controller.ts";

async function run(seed: number): Promise<{ calls: string[]; requests: string[] }> {
  seedProcessRandom(seed);
  const fake = new FakeProvider();
  // s1's first tries fail: retries and their events are part of the run.
  let failures = 0;
  fake.errors["ensure-load-balancer"] = (subject) =>
    subject === "default/s1" && failures++ < 2 ? new Error("the cloud is busy") : undefined;
  const t = newController(serviceController, fake, [], { clockStart: Date.UTC(2026, 10, 29) });
  fake.clock = t.clock;
  fake.delayMs = 100;
  const node: Node = {
    metadata: { name: "a" },
    spec: { providerID: "fake://a" },
    status: { conditions: [{ type: "Ready", status: "True" }] },
  };
  t.apiserver.seed("nodes", node);
  await t.run(async () => {
    for (let i = 0; i < 5; i++) {
      await t.client.create(SERVICES, {
        metadata: { name: `s${i}`, namespace: "default" },
        spec: { type: "LoadBalancer", ports: [{ port: 80, protocol: "TCP" }] },
      }, { namespace: "default" });
    }
    await t.advance(60_000);
    await t.client.patch(NODES, "a", "merge", {
      metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "" } },
    });
    await t.advance(60_000);
  });
  return { calls: [...fake.calls], requests: [...t.apiserver.requests] };
}

Deno.test("replay: two runs of one seed make the same requests in the same order; another seed, other event names", async () => {
  const first = await run(7);
  const again = await run(7);
  assert(
    first.calls.length > 5 && first.requests.length > 20,
    `${first.calls.length} calls, ${first.requests.length} requests`,
  );
  assertEquals(again.calls, first.calls);
  assertEquals(again.requests, first.requests);
  const other = await run(8);
  assertEquals(other.calls, first.calls, "the same calls: the seed only spreads what is random");
  assert(other.requests.join() !== first.requests.join(), "event names carry the seed's draws");
});
