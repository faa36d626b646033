/**
 * The firewall follows the balancers: a burst of syncs at once, then Service changes coalesced into
 * one sync a minute, however many a tenant makes.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FAKE_NODE_SELECTOR, FakeProvider } from "../../providers/fake/fake_provider.ts";
import { serviceController } from "../service/mod.ts";
import { NODES, SERVICES } from "../../kube/resources.ts";

function lb(name: string, port: number): Service {
  return {
    metadata: { name, namespace: "default" },
    spec: { type: "LoadBalancer", ports: [{ port, protocol: "TCP", nodePort: 30000 + port }] },
  };
}

Deno.test("service firewall: a burst of syncs at once (a new balancer opened at once), then tenants' changes once a minute", async () => {
  const fake = new FakeProvider();
  let syncs = 0;
  const unchanged: boolean[] = [];
  Object.assign(fake.loadBalancers, {
    firewall: {
      sync: (_signal: AbortSignal, options?: { balancersUnchanged?: boolean }) => {
        unchanged.push(options?.balancersUnchanged ?? false);
        return Promise.resolve({ changed: ++syncs === 1, rules: 1 });
      },
    },
  });
  const t = newController(serviceController, fake);
  t.apiserver.seed("services", lb("web", 80));
  await t.run(async () => {
    await t.advance(300);
    assertEquals(syncs, 2, "the sync at start, and the Service as listed: at once");
    // A tenant churning Services: the first change is synced at once (the burst's last token) ...
    await t.client.create(SERVICES, lb("first", 99));
    await t.advance(300);
    assertEquals(syncs, 3);
    // ... ten more within a second start no sync now ...
    for (let i = 0; i < 10; i++) await t.client.create(SERVICES, lb(`churn-${i}`, 100 + i));
    await t.advance(500);
    assertEquals(syncs, 3, "the burst is spent: one a minute");
    // ... a minute later, the ten changes cost one sync together.
    await t.advance(60_000);
    assertEquals(syncs, 4, "the held changes, synced once");
    assertEquals(unchanged, [false, false, false, false], "a change looks at the balancers again");
    await t.advance(60_000);
    assertEquals(syncs, 4, "nothing changed since: nothing more");
  });
  assertEquals(t.metrics.gauge("firewall_balancer_rules", "").get(), 1);
  assertEquals(t.metrics.counter("firewall_rule_writes_total", "").get(), 1);
});

Deno.test("service firewall: a Service the firewall concerns asks for a sync without a look at the balancers; refusals are said once on the Service", async () => {
  const fake = new FakeProvider();
  const unchanged: boolean[] = [];
  let refuse = true;
  Object.assign(fake.loadBalancers, {
    firewall: {
      concerns: (svc: Service) => svc.metadata?.annotations?.["opens"] !== undefined,
      sync: (_signal: AbortSignal, options?: { balancersUnchanged?: boolean }) => {
        unchanged.push(options?.balancersUnchanged ?? false);
        return Promise.resolve({
          changed: true,
          rules: 1,
          refused: refuse ? [{ service: "default/np", message: "opens: not here" }] : [],
        });
      },
    },
  });
  const t = newController(serviceController, fake);
  const np: Service = {
    metadata: { name: "np", namespace: "default", uid: "uid-np", annotations: { opens: "true" } },
    spec: { type: "NodePort", ports: [{ port: 80, protocol: "TCP", nodePort: 31000 }] },
  };
  t.apiserver.seed("services", np);
  const told = () =>
    t.apiserver.objects<{ reason?: string; count?: number; involvedObject?: { name?: string } }>("events")
      .filter((e) => e.reason === "FirewallNodePortsRefused" && e.involvedObject?.name === "np")
      .reduce((n, e) => n + (e.count ?? 1), 0);
  await t.run(async () => {
    await t.advance(1_000);
    assertEquals(unchanged, [false], "the sync at start");
    assertEquals(told(), 1, "the refusal is said on the Service");
    // The NodePort Service changes: a sync a minute later that does not look at the balancers again.
    await t.client.patch(
      SERVICES,
      "np",
      "merge",
      { metadata: { annotations: { ranges: "203.0.113.0/24" } } },
      {
        namespace: "default",
      },
    );
    await t.advance(60_000);
    assertEquals(unchanged, [false, true]);
    assertEquals(told(), 1, "the same refusal is not said again");
    // A ClusterIP Service without the annotation concerns nobody: no sync.
    await t.client.create(SERVICES, {
      metadata: { name: "plain", namespace: "default" },
      spec: { type: "ClusterIP", ports: [{ port: 80, protocol: "TCP" }] },
    }, { namespace: "default" });
    await t.advance(2 * 60_000);
    assertEquals(unchanged.length, 2);
    // Taken back, then refused again: said again.
    refuse = false;
    await t.client.patch(SERVICES, "np", "merge", { metadata: { annotations: { ranges: null } } }, {
      namespace: "default",
    });
    await t.advance(60_000);
    refuse = true;
    await t.client.patch(
      SERVICES,
      "np",
      "merge",
      { metadata: { annotations: { ranges: "198.51.100.0/24" } } },
      {
        namespace: "default",
      },
    );
    await t.advance(60_000);
    assertEquals(told(), 2);
  });
});

Deno.test("service firewall: a provider that watches is never checked periodically; its poke syncs without a look at the balancers", async () => {
  for (const watches of [false, true]) {
    const fake = new FakeProvider();
    const unchanged: boolean[] = [];
    let poke: (() => void) | undefined;
    Object.assign(fake.loadBalancers, {
      firewall: {
        sync: (_signal: AbortSignal, options?: { balancersUnchanged?: boolean }) => {
          unchanged.push(options?.balancersUnchanged ?? false);
          return Promise.resolve({ changed: false, rules: 1 });
        },
        ...(watches ? { watch: (p: () => void) => poke = p } : {}),
      },
    });
    const t = newController(serviceController, fake, ["--drift-repair-period=10m"]);
    t.apiserver.seed("services", lb("web", 80));
    await t.run(async () => {
      // The start (the sync at start, and the Service the informer lists, a minute later).
      await t.advance(61_000);
      const start = unchanged.length;
      assert(unchanged.every((u) => !u), "the start looks at the balancers");
      await t.advance(30 * 60_000);
      assertEquals(
        unchanged.slice(start),
        watches ? [] : [true, true, true],
        watches ? "no sign, no call" : "once per drift period",
      );
      if (!watches) return;
      poke!();
      poke!();
      await t.advance(1_000);
      assertEquals(unchanged.slice(start), [true], "two signs, one sync that reuses the balancers");
    });
  }
});

Deno.test("service firewall: a keeper that keeps failing says so in /readyz and a gauge; balancers left out are counted (item 3, Q6)", async () => {
  const fake = new FakeProvider();
  let fail = true;
  Object.assign(fake.loadBalancers, {
    firewall: {
      sync: () =>
        fail
          ? Promise.reject(new Error("the API answered 503"))
          : Promise.resolve({ changed: true, rules: 1, leftOut: ["lb-newest"] }),
    },
  });
  const t = newController(serviceController, fake);
  t.apiserver.seed("services", lb("web", 80));
  await t.run(async () => {
    await t.advance(300);
    // Retried with backoff (10 s, 20 s, ...): the third failure in a row reaches /readyz.
    for (let i = 0; i < 4 && !t.conditions.problem()?.includes("firewall"); i++) await t.advance(60_000);
    assert(
      /firewall: failed [3-9] times in a row, last: the API answered 503/.test(t.conditions.problem() ?? ""),
      t.conditions.problem(),
    );
    assert(t.metrics.gauge("loop_consecutive_failures", "").get({ loop: "firewall" })! >= 3);
    fail = false;
    await t.advance(300_000);
  });
  assertEquals(t.conditions.problem(), undefined, "a success clears it");
  assertEquals(t.metrics.gauge("loop_consecutive_failures", "").get({ loop: "firewall" }), 0);
  assertEquals(t.metrics.gauge("firewall_balancers_left_out", "").get(), 1);
});

Deno.test("service firewall: a Service turned to ClusterIP is synced again once its balancer is gone (explorer seed 293)", async () => {
  const fake = new FakeProvider();
  // What each sync saw: the balancers there were.
  const seen: number[] = [];
  Object.assign(fake.loadBalancers, {
    firewall: {
      sync: () => {
        seen.push(fake.balancers.size);
        return Promise.resolve({ changed: true, rules: fake.balancers.size });
      },
    },
  });
  const t = newController(serviceController, fake);
  t.apiserver.seed("services", lb("web", 80));
  await t.run(async () => {
    await t.advance(300);
    assertEquals(fake.balancers.size, 1);
    await t.advance(120_000); // the burst refilled
    await t.client.patch(SERVICES, "web", "merge", { spec: { type: "ClusterIP" } }, { namespace: "default" });
    await t.advance(120_000);
  });
  assertEquals(fake.balancers.size, 0, "the balancer is deleted");
  assertEquals(seen.at(-1), 0, `the last sync saw it gone (syncs saw ${seen.join(", ")})`);
  assertEquals(t.metrics.gauge("firewall_balancer_rules", "").get(), 0);
});

Deno.test("service firewall: after a Service's change, the firewall looks again once its balancer followed (explorer seed 249)", async () => {
  const fake = new FakeProvider();
  fake.delayMs = 1_000; // an ensure takes a second: the sync the change asked for runs before it ends
  // What each sync saw: the ports of the balancer there was.
  const seen: string[] = [];
  Object.assign(fake.loadBalancers, {
    firewall: {
      sync: () => {
        seen.push([...fake.balancers.values()].map((b) => b.ports.join("+")).join() || "none");
        return Promise.resolve({ changed: true, rules: 1 });
      },
    },
  });
  const t = newController(serviceController, fake);
  fake.clock = t.clock;
  t.apiserver.seed("services", lb("web", 80));
  await t.run(async () => {
    await t.advance(5_000);
    await t.advance(120_000); // the burst refilled
    await t.client.patch(SERVICES, "web", "merge", {
      spec: {
        ports: [{ port: 80, protocol: "TCP", nodePort: 30080 }, {
          port: 443,
          protocol: "TCP",
          nodePort: 30443,
        }],
      },
    }, { namespace: "default" });
    await t.advance(120_000);
  });
  assertEquals(
    seen.at(-1),
    "80+443",
    `the last sync saw the balancer as changed (syncs saw ${seen.join(" | ")})`,
  );
});

Deno.test("service firewall: a balancer that gets its first target (a Node joins its pool) or loses its last is looked at again (explorer seeds 72 and 83 of workload 3)", async () => {
  const fake = new FakeProvider();
  // What each sync saw: the hosts of each balancer there was.
  const seen: string[] = [];
  Object.assign(fake.loadBalancers, {
    firewall: {
      sync: () => {
        seen.push([...fake.balancers.values()].map((b) => b.hosts.join("+") || "none").join());
        return Promise.resolve({ changed: true, rules: 1 });
      },
    },
  });
  const t = newController(serviceController, fake);
  const pooled: Service = {
    ...lb("web", 80),
    metadata: { name: "web", namespace: "default", annotations: { [FAKE_NODE_SELECTOR]: "pool=web" } },
  };
  const node: Node = { metadata: { name: "a", labels: { pool: "db" } }, spec: { providerID: "fake://a" } };
  t.apiserver.seed("nodes", node);
  t.apiserver.seed("services", pooled);
  await t.run(async () => {
    await t.advance(5_000);
    assertEquals(seen.at(-1), "none", "made with no Node in its pool");
    await t.advance(120_000); // the burst refilled
    // A Node joins the pool: a node sync gives the balancer its first target.
    await t.client.patch(NODES, "a", "merge", { metadata: { labels: { pool: "web" } } });
    await t.advance(5_000);
    assertEquals(seen.at(-1), "a", `the firewall looked again (syncs saw ${seen.join(" | ")})`);
    await t.advance(120_000);
    // The last one leaves: looked at again too.
    await t.client.patch(NODES, "a", "merge", { metadata: { labels: { pool: "db" } } });
    await t.advance(5_000);
    assertEquals(seen.at(-1), "none", `the firewall looked again (syncs saw ${seen.join(" | ")})`);
  });
});
