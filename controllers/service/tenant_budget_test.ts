/**
 * What one namespace can make the service controller spend (security review Q3, Q4), on the fake
 * provider and a fake clock: every sync a namespace causes, first try or retry, is paid from its
 * budget, and namespaces take turns in the queue.
 */
import { assert, assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { SERVICES } from "../../kube/resources.ts";
import { serviceController } from "./controller.ts";
import { SERVICE_CHANGE_BURST, SERVICE_CHANGE_REFILL_MS } from "./change_budget.ts";

const node = {
  metadata: { name: "a" },
  spec: { providerID: "fake://a" },
  status: { conditions: [{ type: "Ready", status: "True" }] },
};
const service = (namespace: string, name: string) => ({
  metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
  spec: { type: "LoadBalancer", ports: [{ port: 80, protocol: "TCP" }] },
});
const HOUR = 3_600_000;
const ensures = (fake: FakeProvider, prefix: string) =>
  fake.calls.filter((c) => c.startsWith(`ensure-load-balancer ${prefix}`)).length;

Deno.test("tenant budget: 400 Services that fail for free are retried from their namespace's budget: 100, then 360 an hour (Q3)", async () => {
  const fake = new FakeProvider();
  // A certificate name that does not exist: the sync fails at once, costing the tenant nothing.
  fake.errors["ensure-load-balancer"] = (subject) =>
    subject.startsWith("evil/") ? new Error('certificate "does-not-exist" not found') : undefined;
  const t = newController(serviceController, fake);
  t.apiserver.seed("nodes", node);
  const perHour: number[] = [];
  await t.run(async () => {
    for (let i = 0; i < 400; i++) await t.client.create(SERVICES, service("evil", `s${i}`));
    await t.settle();
    for (let hour = 0; hour < 2; hour++) {
      const before = ensures(fake, "evil/");
      for (let m = 0; m < 60; m++) await t.advance(60_000);
      perHour.push(ensures(fake, "evil/") - before);
    }
    // Another namespace is not held by evil's spending.
    await t.client.create(SERVICES, service("good", "web"));
    await t.settle();
    assertEquals(ensures(fake, "good/"), 1, "good's first sync at once");
  });
  const rate = HOUR / SERVICE_CHANGE_REFILL_MS;
  console.log(
    `400 failing Services in one namespace: ensures hour 1 = ${perHour[0]}, hour 2 = ${perHour[1]}`,
  );
  // The first hour holds the burst (the creates), then the refill; each later hour the refill alone.
  assert(perHour[0] <= SERVICE_CHANGE_BURST + rate + 1, `hour 1: ${perHour[0]}`);
  assert(perHour[1] <= rate + 1, `hour 2: ${perHour[1]}`);
  assert(perHour[1] >= rate * 0.9, `hour 2: ${perHour[1]}: the budget is used, retries still run`);
});

Deno.test("tenant budget: one namespace's burst does not delay another's first sync by more than one sync (Q4)", async () => {
  const fake = new FakeProvider();
  const SYNC_MS = 10_000;
  fake.delayMs = SYNC_MS;
  const t = newController(serviceController, fake);
  fake.clock = t.clock;
  t.apiserver.seed("nodes", node);
  let waited = -1;
  await t.run(async () => {
    for (let i = 0; i < SERVICE_CHANGE_BURST; i++) await t.client.create(SERVICES, service("evil", `s${i}`));
    await t.client.create(SERVICES, service("good", "web"));
    await t.settle();
    const created = t.clock.now();
    for (let s = 0; s < 300 && ensures(fake, "good/") === 0; s++) await t.advance(1_000);
    waited = t.clock.now() - created;
  });
  console.log(`good/web's first ensure began ${waited / 1000} s after it was created, behind a burst of 100`);
  assert(waited >= 0 && waited <= SYNC_MS, `waited ${waited} ms`);
  assertEquals(ensures(fake, "good/"), 1);
});
