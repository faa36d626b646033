/**
 * An exclusive `loadBalancerClass` (official CCM #832): with `--load-balancer-class-exclusive` the CCM
 * serves only Services of its class, and leaves new Services without a class to another implementation
 * (MetalLB, Cilium LB-IPAM, kube-vip): no balancer, no finalizer, no status. Switching it on deletes
 * nothing: a class-less Service served before keeps its balancer, is still synced (a port added reaches
 * it) and loses it only when it goes.
 *
 * Hostile: where policy keeps the class from tenants, a tenant writing the CCM's finalizer onto a
 * class-less Service does not buy a balancer ("served before" is what the cloud holds, not the
 * finalizer): no balancer, no status, and the finalizer is taken off so the Service can go.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { lbService } from "../testing/services.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { LB_FINALIZER } from "../kube/well_known.ts";

const CLASS = "hcloud.deno-ccm/lb";

Deno.test({
  name: "load balancer class, exclusive: only our class is served; a switch deletes nothing",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "w1", location: "fsn1" });
    await registerNode(client, "w1");
    const args = ["--controllers=cloud-node,service", `--load-balancer-class=${CLASS}`];
    const get = (name: string) => client.get(SERVICES, name, { namespace: "default" });
    const balancerOf = async (name: string) => {
      const uid = (await get(name)).metadata!.uid!;
      return [...sim.world.loadBalancers.values()].find((lb) => lb.labels["hcloud-ccm/service-uid"] === uid);
    };
    let ccm = await startCcm(cluster, sim, args);
    try {
      await eventually(async () => !!(await client.get(NODES, "w1")).spec?.providerID, 20_000);
      await client.create(SERVICES, lbService("before"));
      await eventually(async () => (await balancerOf("before")) !== undefined, 20_000);
      await ccm.stop();

      ccm = await startCcm(cluster, sim, [...args, "--load-balancer-class-exclusive"]);
      await client.create(SERVICES, lbService("after"));
      await client.create(SERVICES, lbService("ours", {}, { loadBalancerClass: CLASS }));
      const forged = lbService("forged");
      await client.create(SERVICES, {
        ...forged,
        metadata: { ...forged.metadata, finalizers: [LB_FINALIZER] },
      });
      await eventually(async () => (await balancerOf("ours")) !== undefined, 20_000);
      assertEquals(await balancerOf("after"), undefined, "a new class-less Service is another's");
      await eventually(async () => (await get("forged")).metadata?.finalizers === undefined, 20_000);
      assertEquals(await balancerOf("forged"), undefined, "a forged finalizer buys no balancer");
      assertEquals((await get("forged")).status?.loadBalancer?.ingress, undefined);
      const after = await get("after");
      assertEquals([after.metadata?.finalizers, after.status?.loadBalancer?.ingress], [undefined, undefined]);

      // The one served before stays served: its balancer is kept and follows a change.
      const before = await get("before");
      await client.update(SERVICES, {
        ...before,
        spec: {
          ...before.spec,
          ports: [...before.spec!.ports!, { name: "https", port: 443, protocol: "TCP" }],
        },
      });
      await eventually(async () => (await balancerOf("before"))?.services.length === 2, 20_000);
      const beforeId = (await balancerOf("before"))!.id;
      await client.delete(SERVICES, "before", { namespace: "default" });
      await eventually(() => !sim.world.loadBalancers.has(beforeId), 20_000);
      assertEquals(sim.world.loadBalancers.size, 1, "only our class's balancer is left");
      assert((await balancerOf("ours")) !== undefined);
    } finally {
      await close(ccm);
    }
  },
});
