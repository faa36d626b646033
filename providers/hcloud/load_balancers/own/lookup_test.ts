/**
 * A start's lookups: one list of the balancers that name an owner answers each Service's first lookup
 * (a start syncs every Service), where each sync used to look its own up.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals, assertRejects } from "../../../../testing/assert.ts";
import { startTestSim } from "../../../../testing/sim_harness.ts";
import { providerOnSim } from "../../../../testing/provider_on_sim.ts";

const CLUSTER = "7b0d0c3e-0000-4000-8000-000000000002";

const svc = (i: number): Service => ({
  metadata: { name: `s${i}`, namespace: "default", uid: `uid-${i}`, annotations: {} },
  spec: { type: "LoadBalancer", ports: [{ name: "p", port: 80, protocol: "TCP", nodePort: 30080 + i }] },
});

Deno.test("lookup prefetch: a start's syncs of in-step Services cost one list, not a lookup each; a create still looks first", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    const env = { HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1" };
    const server = t.sim.addServer({ name: "n1", location: "fsn1" });
    const nodes: Node[] = [{ metadata: { name: "n1" }, spec: { providerID: `hcloud://${server.id}` } }];
    const services = [1, 2, 3, 4, 5].map(svc);
    const before = await providerOnSim(t, env, CLUSTER);
    for (const service of services.slice(0, 4)) {
      await before.loadBalancers!.ensureLoadBalancer({ clusterName: "k", service, nodes });
    }
    // A new process: four Services in step, one (s5) without a balancer yet.
    const after = await providerOnSim(t, env, CLUSTER);
    const lookups = () =>
      t.sim.audit.filter((e) => e.route === "GET /load_balancers" && e.query?.includes("service-uid%3Duid"))
        .length;
    const lists = () =>
      t.sim.audit.filter((e) => e.route === "GET /load_balancers" && !e.query?.includes("%3D"));
    const from = lookups();
    const listed = lists().length;
    await after.loadBalancers!.prefetch!(services);
    assertEquals(lists().length - listed, 1, "one page of the balancers that name an owner");
    for (const service of services) {
      await after.loadBalancers!.ensureLoadBalancer({ clusterName: "k", service, nodes });
    }
    assertEquals(lookups() - from, 1, "only s5, whose create rests on a lookup of its own");
    assertEquals(t.sim.world.loadBalancers.size, 5, "nothing made twice");
    // A prefetched answer serves once: the next sync looks again.
    await after.loadBalancers!.ensureLoadBalancer({ clusterName: "k", service: services[0], nodes });
    assertEquals(lookups() - from, 2);

    // Two balancers naming one Service are still the error a lookup reports.
    const [first] = [...t.sim.world.loadBalancers.values()].filter((lb) =>
      lb.labels["hcloud-ccm/service-uid"] === "uid-2"
    );
    const copy = await t.api("POST", "/load_balancers", {
      name: "copy",
      load_balancer_type: "lb11",
      location: "fsn1",
      labels: { ...first.labels },
    });
    assertEquals(copy.status, 201);
    const third = await providerOnSim(t, env, CLUSTER);
    await third.loadBalancers!.prefetch!(services);
    const err = await assertRejects(
      () => third.loadBalancers!.ensureLoadBalancer({ clusterName: "k", service: services[1], nodes }),
      Error,
    );
    assertEquals(
      (err as Error).message.includes("2 load balancers carry hcloud-ccm/service-uid=uid-2"),
      true,
    );
  } finally {
    await t.finish();
  }
});
