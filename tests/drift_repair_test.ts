/**
 * Drift repair against a real apiserver and the simulator: changes made in the console to balancers
 * the CCM manages (a deleted service, a changed health check, a removed target) are reverted after one
 * paginated list of this cluster's balancers, with a `LoadBalancerDrifted` Warning naming what changed;
 * a quiet period costs list pages only, and a balancer made outside Kubernetes is never touched.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import type { LoadBalancer } from "../hcloud_sim/world.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { lbService } from "../testing/services.ts";

const P = "load-balancer.hetzner.cloud/";

const service = (name: string, annotations: Record<string, string> = {}) => lbService(name, annotations);

Deno.test({
  name: "drift repair: console changes to our balancers are reverted by one list; others are untouched",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { cluster, s, sim, client, close } = await testEnvironment();
    for (const i of [1, 2]) {
      sim.addServer({ name: `d${i}`, location: "fsn1", labels: { pool: i === 1 ? "edge" : "core" } });
      await registerNode(client, `d${i}`, { labels: { pool: i === 1 ? "edge" : "core" } });
    }
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node,service",
      "--drift-repair-period=2s",
    ]);
    const lbOf = async (name: string): Promise<LoadBalancer | undefined> => {
      const uid = (await client.get(SERVICES, name, { namespace: "default" })).metadata!.uid!;
      return [...sim.world.loadBalancers.values()].find((lb) => lb.labels["hcloud-ccm/service-uid"] === uid);
    };
    const ours = (from: number) => sim.audit.slice(from).filter((e) => e.userAgent.startsWith("deno-ccm"));
    const drifted = async (name: string, what: string) =>
      (await eventsOf(client, name)).some((e) =>
        e.startsWith("Warning LoadBalancerDrifted") && e.includes(what)
      );
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      await client.create(SERVICES, service("web"));
      await client.create(SERVICES, service("edge", { [`${P}node-selector`]: "pool=edge" }));
      for (const name of ["web", "edge"]) {
        await eventually(
          async () =>
            ((await client.get(SERVICES, name, { namespace: "default" })).status?.loadBalancer?.ingress ?? [])
              .length > 0,
          30_000,
        );
      }
      const web = (await lbOf("web"))!;
      const edge = (await lbOf("edge"))!;
      const foreign = (await s.api("POST", "/load_balancers", {
        name: "made-by-terraform",
        load_balancer_type: "lb11",
        location: "fsn1",
        labels: { "deno-ccm/cluster-id": web.labels["deno-ccm/cluster-id"] },
      })).body.load_balancer;
      await s.api("POST", `/load_balancers/${foreign.id}/actions/add_service`, {
        protocol: "tcp",
        listen_port: 9000,
        destination_port: 9000,
      });

      await t.step("a quiet period costs list pages only", async () => {
        const from = sim.audit.length;
        await new Promise((r) => setTimeout(r, 5_000));
        const routes = new Set(ours(from).map((e) => e.route));
        assert(routes.has("GET /load_balancers"), "drift repair listed the balancers");
        assertEquals(
          [...routes].filter((r) => r.includes("/load_balancers") && r !== "GET /load_balancers"),
          [],
        );
      });

      await t.step("a service deleted in the console comes back", async () => {
        await s.api("POST", `/load_balancers/${web.id}/actions/delete_service`, { listen_port: 80 });
        await eventually(
          () => sim.world.loadBalancers.get(web.id)!.services.some((x) => x.listen_port === 80),
          20_000,
        );
        // The Warning is recorded as the repair starts and written in the background: it may land after it.
        await eventually(() => drifted("web", "service on port 80 deleted"), 10_000);
      });

      await t.step("a changed health check is reverted", async () => {
        const before = sim.world.loadBalancers.get(web.id)!.services[0].health_check.port;
        await s.api("POST", `/load_balancers/${web.id}/actions/update_service`, {
          listen_port: 80,
          health_check: { protocol: "tcp", port: 1, interval: 15, timeout: 10, retries: 3 },
        });
        assertEquals(sim.world.loadBalancers.get(web.id)!.services[0].health_check.port, 1);
        await eventually(
          () => sim.world.loadBalancers.get(web.id)!.services[0].health_check.port === before,
          20_000,
        );
        await eventually(() => drifted("web", "service on port 80 changed"), 10_000);
      });

      await t.step("a removed server target is added back", async () => {
        const target = sim.world.loadBalancers.get(edge.id)!.targets.find((x) => x.type === "server")!;
        await s.api("POST", `/load_balancers/${edge.id}/actions/remove_target`, {
          type: "server",
          server: { id: target.server!.id },
        });
        await eventually(
          () => sim.world.loadBalancers.get(edge.id)!.targets.some((x) => x.server?.id === target.server!.id),
          20_000,
        );
        await eventually(() => drifted("edge", "target removed"), 10_000);
      });

      await t.step("a balancer deleted outside the CCM is recreated from the same list", async () => {
        const lost = (await lbOf("edge"))!;
        sim.control.vanishLoadBalancer(lost.id);
        await eventually(async () => {
          const lb = await lbOf("edge");
          return lb !== undefined && lb.id !== lost.id;
        }, 20_000);
        assert((await eventsOf(client, "edge")).some((e) => e.startsWith("Warning LoadBalancerMissing")));
      });

      await t.step("the balancer made outside Kubernetes is never touched", () => {
        const lb = sim.world.loadBalancers.get(foreign.id)!;
        assertEquals(lb.services.map((x) => x.listen_port), [9000]);
        assertEquals(
          sim.audit.filter((e) => e.userAgent.startsWith("deno-ccm") && e.path.includes(`/${foreign.id}`)),
          [],
        );
      });

      await t.step(
        "every balancer gone at once is held, not recreated; a confirmed one is (probe N3)",
        async () => {
          for (const name of ["web", "edge"]) sim.control.vanishLoadBalancer((await lbOf(name))!.id);
          const creates = () => sim.count(/^POST \/load_balancers$/);
          const before = creates();
          for (const name of ["web", "edge"]) {
            await eventually(
              async () =>
                (await eventsOf(client, name)).some((e) => e.startsWith("Warning LoadBalancersMissingHeld")),
              20_000,
            );
          }
          await new Promise((r) => setTimeout(r, 4_500)); // two more drift periods
          assertEquals(creates(), before, "nothing recreated");
          await client.patch(SERVICES, "web", "merge", {
            metadata: { annotations: { "service.deno-ccm.io/confirm-recreate": "true" } },
          }, { namespace: "default" });
          await eventually(async () => (await lbOf("web")) !== undefined, 20_000);
          assertEquals(await lbOf("edge"), undefined, "only the confirmed Service's balancer");
        },
      );
    } finally {
      await close(ccm);
    }
  },
});
