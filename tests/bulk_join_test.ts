/**
 * Bulk joins (the official CCM misses targets when several Nodes join at once: its #1035, #853):
 * 30 Nodes registered together, within one sync period, into a cluster whose balancers already
 * serve. Every eligible Node becomes a target of every balancer, through the cluster's label
 * selector and through server targets (a node-selector balancer); where the balancer type holds
 * fewer (lb11: 25), exactly that many are targets and each Node left out says so (`MaxTargetsReached`).
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { renderLoadBalancer, targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES, SERVICES } from "../kube/resources.ts";

const P = "load-balancer.hetzner.cloud/";
const JOINING = 30;

function service(name: string, annotations: Record<string, string>): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", annotations: { [`${P}location`]: "fsn1", ...annotations } },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ port: 80, protocol: "TCP" }] },
  };
}

Deno.test({
  name: "bulk join: 30 Nodes at once become targets of every balancer, or the type's limit is said",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    const first = [1, 2].map((i) => sim.addServer({ name: `n${i}`, location: "fsn1" }));
    for (const i of [1, 2]) await registerNode(client, `n${i}`, { labels: { pool: "web" } });
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"]);
    const lbOf = async (name: string) => {
      const uid = (await client.get(SERVICES, name, { namespace: "default" })).metadata!.uid!;
      return [...sim.world.loadBalancers.values()].find((lb) => lb.labels["hcloud-ccm/service-uid"] === uid);
    };
    const targets = async (name: string) => {
      const lb = await lbOf(name);
      return lb ? targetServerIds(sim.world, lb) : [];
    };
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      // The cluster's label selector (lb21: 75 targets), server targets (a node selector, lb21), and
      // server targets on a type that holds 25.
      await client.create(SERVICES, service("by-label", { [`${P}type`]: "lb21" }));
      await client.create(
        SERVICES,
        service("by-server", { [`${P}type`]: "lb21", [`${P}node-selector`]: "pool=web" }),
      );
      await client.create(
        SERVICES,
        service("small", { [`${P}type`]: "lb11", [`${P}node-selector`]: "pool=web" }),
      );
      for (const name of ["by-label", "by-server", "small"]) {
        await eventually(async () => (await targets(name)).length === 2, 30_000);
      }

      // 30 Nodes join at once: servers made, Nodes registered together.
      const joining = Array.from(
        { length: JOINING },
        (_, i) => sim.addServer({ name: `j${i}`, location: "fsn1" }),
      );
      await Promise.all(joining.map((_, i) => registerNode(client, `j${i}`, { labels: { pool: "web" } })));
      const all = [...first, ...joining].map((s) => s.id).sort((a, b) => a - b);

      await eventually(async () => JSON.stringify(await targets("by-label")) === JSON.stringify(all), 60_000);
      await eventually(
        async () => JSON.stringify(await targets("by-server")) === JSON.stringify(all),
        60_000,
      );
      // lb11 holds 25 server targets: 25 of the 32, and each Node left out says why (as HCCM puts it).
      await eventually(async () => (await targets("small")).length === 25, 60_000);
      const small = await targets("small");
      const untargeted = [...first, ...joining].filter((s) => !small.includes(s.id)).map((s) => s.name);
      assertEquals(untargeted.length, 7);
      await eventually(async () => {
        for (const name of untargeted) {
          if (!(await eventsOf(client, name)).some((e) => e.includes("MaxTargetsReached"))) return false;
        }
        return true;
      }, 30_000);
      // Every target the small balancer has is one of the cluster's servers, each once.
      assertEquals(renderLoadBalancer(sim.world, (await lbOf("small"))!).targets.length, 25);
      assert((await targets("small")).every((id) => all.includes(id)));
      // The balancers that had room say nothing of a limit.
      for (const name of ["by-label", "by-server"]) {
        assertEquals((await eventsOf(client, name)).filter((e) => e.includes("MaxTargetsReached")), []);
      }
    } finally {
      await close(ccm);
    }
  },
});
