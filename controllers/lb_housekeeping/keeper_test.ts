/**
 * The service controller's housekeeping against the fake provider's inventory capability: drift
 * reverted, missing balancers recreated (and held when too many vanish at once), orphans swept.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { serviceController } from "../service/mod.ts";

const node = (name: string) => ({
  metadata: { name },
  spec: { providerID: `fake://${name}` },
  status: { conditions: [{ type: "Ready", status: "True" }] },
});

const service = (name: string): Service => ({
  metadata: { name, namespace: "default", uid: `uid-${name}` },
  spec: { type: "LoadBalancer", ports: [{ port: 80, protocol: "TCP" }] },
});

function reasons(t: ReturnType<typeof newController>, name: string): string[] {
  return t.apiserver.objects<{ reason?: string; involvedObject?: { name?: string } }>("events")
    .filter((e) => e.involvedObject?.name === name).map((e) => e.reason ?? "");
}

function started(names: string[], args: string[]) {
  const fake = new FakeProvider();
  const t = newController(serviceController, fake, args);
  t.apiserver.seed("nodes", node("a"));
  for (const name of names) t.apiserver.seed("services", service(name));
  return { fake, t };
}

/** The default drift repair period: the fake clock makes an operator's period cost nothing. */
const PERIOD_MS = 10 * 60_000;

Deno.test("housekeeping (fake inventory): a drifted balancer is synced again with an event; a missing one is recreated; an orphan is swept", async () => {
  const { fake, t } = started(["s1", "s2", "s3"], ["--drift-repair-period=10m"]);
  await t.run(async () => {
    await t.advance(1_000);
    assertEquals(fake.balancers.size, 3);
    const ensures = (name: string) =>
      fake.callsOf("ensure-load-balancer").filter((c) => c.endsWith(name)).length;

    fake.drifted.set("uid-s1", ["service on port 80 deleted"]);
    await t.advance(PERIOD_MS - 2_000);
    assertEquals(ensures("s1"), 1, "not before the period");
    await t.advance(2_000);
    assertEquals(ensures("s1"), 2, "synced again at the period");
    assert(reasons(t, "s1").includes("LoadBalancerDrifted"), reasons(t, "s1").join(", "));
    assertEquals(ensures("s2"), 1);

    fake.balancers.delete("default/s2");
    await t.advance(PERIOD_MS);
    assertEquals(fake.balancers.has("default/s2"), true, "recreated");
    assert(reasons(t, "s2").includes("LoadBalancerMissing"), reasons(t, "s2").join(", "));

    // A balancer whose Service is gone: the drift look shows its owner, the sweep takes it.
    fake.balancers.set("default/gone", {
      ...fake.balancers.get("default/s3")!,
      service: "default/gone",
      uid: "uid-gone",
    });
    await t.advance(PERIOD_MS);
    assertEquals(fake.balancers.has("default/gone"), false, "swept");
    assertEquals(fake.callsOf("sweep-orphans").at(-1), "sweep-orphans uid-s1,uid-s2,uid-s3");
    assertEquals([...fake.balancers.keys()].sort(), ["default/s1", "default/s2", "default/s3"]);
    assertEquals(fake.callsOf("drift").length, 3, "one look per period, three periods");
  });
});

Deno.test("housekeeping (fake inventory): most balancers vanishing at once are not recreated until the cloud shows them again", async () => {
  const { fake, t } = started(["s1", "s2", "s3"], ["--drift-repair-period=10m"]);
  await t.run(async () => {
    await t.advance(1_000);
    assertEquals(fake.balancers.size, 3);
    const kept = { s2: fake.balancers.get("default/s2")!, s3: fake.balancers.get("default/s3")! };
    fake.balancers.delete("default/s2");
    fake.balancers.delete("default/s3");
    await t.advance(3 * PERIOD_MS);
    assert(reasons(t, "s3").includes("LoadBalancersMissingHeld"), reasons(t, "s3").join(", "));
    assert(reasons(t, "s2").includes("LoadBalancersMissingHeld"), reasons(t, "s2").join(", "));
    assertEquals(fake.callsOf("ensure-load-balancer").length, 3, "held: nothing recreated");

    // The cloud shows them again (an outage ended): nothing to recreate, nothing held.
    fake.balancers.set("default/s2", kept.s2);
    fake.balancers.set("default/s3", kept.s3);
    await t.advance(3 * PERIOD_MS);
    assertEquals(fake.callsOf("ensure-load-balancer").length, 3);
    assertEquals(reasons(t, "s2").filter((r) => r === "LoadBalancerMissing"), []);
  });
});

Deno.test("housekeeping (fake inventory): without drift repair the owners check recreates a missing balancer", async () => {
  const { fake, t } = started(["s1", "s2", "s3"], ["--drift-repair-period=0"]);
  await t.run(async () => {
    await t.advance(1_000);
    assertEquals(fake.balancers.size, 3);
    fake.balancers.delete("default/s1");
    await t.advance(5 * 60_000); // the default --node-status-update-frequency
    assertEquals(fake.balancers.has("default/s1"), true, "recreated");
    assert(fake.callsOf("owners").length >= 1, "the owners check ran");
    assertEquals(fake.callsOf("drift"), []);
    assert(reasons(t, "s1").includes("LoadBalancerMissing"), reasons(t, "s1").join(", "));
  });
});

Deno.test("housekeeping (fake inventory): a balancer none of whose targets is healthy is said on its Service, once each time it starts", async () => {
  const { fake, t } = started(["s1"], ["--drift-repair-period=10m"]);
  // Identical events are one Event object with a count (aggregated as upstream does).
  const told = () =>
    t.apiserver.objects<{ reason?: string; count?: number }>("events")
      .filter((e) => e.reason === "LoadBalancerTargetsUnhealthy").reduce((n, e) => n + (e.count ?? 1), 0);
  await t.run(async () => {
    await t.advance(1_000);
    assertEquals(fake.balancers.size, 1);
    fake.unhealthy.set("uid-s1", "none of its 2 targets passes the health check (http on port 10256)");
    await t.advance(PERIOD_MS);
    assertEquals(told(), 1);
    await t.advance(3 * PERIOD_MS);
    assertEquals(told(), 1, "not repeated while it lasts");
    const event = t.apiserver.objects<{ reason?: string; message?: string; type?: string }>("events")
      .find((e) => e.reason === "LoadBalancerTargetsUnhealthy")!;
    assertEquals([event.type, event.message], [
      "Warning",
      "The load balancer sends no traffic: none of its 2 targets passes the health check (http on port 10256)",
    ]);
    // A target passes again, then all fail again: said again.
    fake.unhealthy.clear();
    await t.advance(PERIOD_MS);
    fake.unhealthy.set("uid-s1", "none of its 2 targets passes the health check (http on port 10256)");
    await t.advance(PERIOD_MS);
    assertEquals(told(), 2);
  });
});
