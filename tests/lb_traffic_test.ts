/**
 * Opt-in balancer traffic (`HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS=true`) with a real apiserver: the
 * CCM's drift repair pass reads a Service's balancer's metrics and exports them, one request per
 * balancer per pass; without the setting nothing is read.
 */
import { assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { lbService } from "../testing/services.ts";
import { NODES, SERVICES } from "../kube/resources.ts";

Deno.test({
  name: "traffic metrics: a balancer's connections, requests and bandwidth exported after each drift pass",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "w1", location: "fsn1" });
    await registerNode(client, "w1");
    const ccm = await startCcm(
      cluster,
      sim,
      ["--controllers=cloud-node,service", "--drift-repair-period=1s"],
      {
        HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS: "true",
      },
    );
    const line = (name: string) => ccm.registry.render().split("\n").find((l) => l.startsWith(`${name}{`));
    try {
      await eventually(async () => !!(await client.get(NODES, "w1")).spec?.providerID, 20_000);
      await client.create(SERVICES, lbService("web"));
      await eventually(() => sim.world.loadBalancers.size === 1, 20_000);
      const lb = [...sim.world.loadBalancers.values()][0];
      sim.world.lbTraffic.set(lb.id, { requests_per_second: 42, open_connections: 7, "bandwidth.in": 1024 });
      await eventually(
        () =>
          line("hcloud_load_balancer_requests_per_second") ===
            `hcloud_load_balancer_requests_per_second{load_balancer="${lb.name}"} 42`,
        20_000,
      );
      assertEquals(line("hcloud_load_balancer_open_connections")?.endsWith(" 7"), true);
      assertEquals(line("hcloud_load_balancer_bandwidth_in_bytes_per_second")?.endsWith(" 1024"), true);
    } finally {
      await close(ccm);
    }
  },
});
