/**
 * The route controller against a real kube-apiserver and the simulator.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { EVENTS, NODES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/client.ts";

const SEED = {
  networks: [{
    name: "k8s",
    ip_range: "10.0.0.0/8",
    subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
  }],
};

function condition(node: Node): string {
  const c = (node.status?.conditions ?? []).find((x) => x.type === "NetworkUnavailable");
  return c ? `${c.status}/${c.reason}/${c.message}` : "none";
}

async function reasons(client: KubeClient, name: string): Promise<string[]> {
  const list = await client.list(EVENTS, {
    namespace: "default",
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.map((e) => e.reason ?? "");
}

Deno.test({
  name: "route controller against a real apiserver and the simulator",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { cluster, sim, client, close } = await testEnvironment({ actionDurationMs: 200 });
    applySeed(sim, SEED);
    const network = sim.world.findNetwork("k8s")!;
    const routes = () => network.routes.map((r) => `${r.destination} via ${r.gateway}`).sort();
    const args = [
      "--controllers=cloud-node,route",
      "--cluster-cidr=10.244.0.0/16",
      "--route-reconciliation-period=1s",
      "--node-status-update-frequency=1s",
    ];
    const env = { HCLOUD_NETWORK: "k8s", HCLOUD_SERVER_CACHE_MAX_AGE: "1s" };
    try {
      await t.step("without --cluster-cidr the network only gives InternalIPs: routes are off", async () => {
        const ccm = await startCcm(cluster, sim, ["--controllers=route"], env);
        await new Promise((r) => setTimeout(r, 1_500));
        await ccm.stop();
        assertEquals(routes(), []);
        assertEquals(sim.count(/^POST \/networks\/\{id\}\/actions\/add_route$/), 0);
      });

      // A foreign route outside the cluster CIDR and a stale one inside it with an unknown gateway.
      network.routes.push({ destination: "192.168.0.0/24", gateway: "10.0.9.9" }, {
        destination: "10.244.99.0/24",
        gateway: "10.0.5.5",
      });
      const servers = [1, 2, 3].map((i) =>
        sim.addServer({ name: `node-${i}`, private_net: [{ network: "k8s" }] })
      );
      const ip = (i: number) => sim.world.servers.get(servers[i].id)!.private_net[0].ip!;
      for (const i of [1, 2, 3]) await registerNode(client, `node-${i}`, { podCIDRs: [`10.244.${i}.0/24`] });
      const ccm = await startCcm(cluster, sim, args, env);
      try {
        await t.step(
          "three nodes → three routes and the conditions set; foreign route kept, stale route removed",
          async () => {
            await eventually(() =>
              JSON.stringify(routes()) === JSON.stringify([
                `10.244.1.0/24 via ${ip(0)}`,
                `10.244.2.0/24 via ${ip(1)}`,
                `10.244.3.0/24 via ${ip(2)}`,
                "192.168.0.0/24 via 10.0.9.9",
              ]), 20_000);
            for (const i of [1, 2, 3]) {
              await eventually(async () =>
                condition(await client.get(NODES, `node-${i}`)) ===
                  "False/RouteCreated/RouteController created a route"
              );
            }
          },
        );

        await t.step(
          "steady state: no cloud writes, one network read per run, no Kubernetes writes",
          async () => {
            await new Promise((r) => setTimeout(r, 1_500));
            const start = sim.audit.length;
            const patches = ccm.registry.counter("kube_api_requests_total", "").get({
              verb: "patch",
              code: "200",
            });
            await new Promise((r) => setTimeout(r, 4_000));
            const calls = sim.audit.slice(start);
            assertEquals(calls.filter((e) => e.method !== "GET").length, 0);
            const reads = calls.filter((e) => e.route === "GET /networks/{id}").length;
            assert(reads >= 2 && reads <= 6, `${reads} network reads in 4 s with a 1 s period`);
            assertEquals(
              ccm.registry.counter("kube_api_requests_total", "").get({ verb: "patch", code: "200" }),
              patches,
            );
          },
        );

        await t.step("node private IP changed → route replaced; node deleted → route removed", async () => {
          // Detach and attach actions, as the API records them: the address refresh follows the log.
          sim.control.moveServerIp(servers[1].id, network.id, "10.0.77.7");
          await eventually(
            () =>
              routes().includes("10.244.2.0/24 via 10.0.77.7") &&
              !routes().some((r) => r.startsWith("10.244.2.0/24 via 10.0.0")),
            20_000,
          );
          await client.delete(NODES, "node-3");
          await eventually(() => !routes().some((r) => r.startsWith("10.244.3.0/24")), 20_000);
          assert(routes().includes("192.168.0.0/24 via 10.0.9.9"), "the foreign route survives");
        });

        await t.step("the API answering locked for a while: the route still converges", async () => {
          sim.control.setFaults({
            rules: [{
              match: "^POST /networks/\\{id\\}/actions/add_route$",
              status: 423,
              code: "locked",
              untilMs: Date.now() + 3_000,
            }],
          });
          sim.addServer({ name: "node-4", private_net: [{ network: "k8s" }] });
          await registerNode(client, "node-4", { podCIDRs: ["10.244.4.0/24", "fd00:10:244:4::/64"] });
          await eventually(
            async () => (await reasons(client, "node-4")).includes("FailedToCreateRoute"),
            20_000,
          );
          assertEquals(
            condition(await client.get(NODES, "node-4")),
            "True/NoRouteCreated/RouteController failed to create a route",
          );
          await eventually(() => routes().some((r) => r.startsWith("10.244.4.0/24 via")), 30_000);
          await eventually(
            async () => condition(await client.get(NODES, "node-4")).startsWith("False/RouteCreated"),
            10_000,
          );
          assert((await reasons(client, "node-4")).includes("IPv6RouteSkipped"));
          assert(!routes().some((r) => r.startsWith("fd00")), "no IPv6 route");
        });

        await t.step(
          "another cluster's routes in the same network and CIDR: never deleted, never fought over (probe N8)",
          async () => {
            const other = sim.addServer({ name: "b-1", private_net: [{ network: "k8s" }] });
            const otherIp = sim.world.servers.get(other.id)!.private_net[0].ip!;
            // Once a server list knows b-1 (the address refresh lists every second here), its routes.
            await new Promise((r) => setTimeout(r, 2_500));
            network.routes.push({ destination: "10.244.50.0/24", gateway: otherIp }, {
              destination: "10.244.51.0/24",
              gateway: otherIp,
            });
            const writes = () => sim.count(/^POST \/networks\/\{id\}\/actions\/(add|delete)_route$/);
            const before = writes();
            sim.addServer({ name: "node-5", private_net: [{ network: "k8s" }] });
            await registerNode(client, "node-5", { podCIDRs: ["10.244.51.0/24"] });
            await eventually(async () => (await reasons(client, "node-5")).includes("RouteConflict"), 20_000);
            await new Promise((r) => setTimeout(r, 3_000)); // three more runs
            assert(routes().includes(`10.244.50.0/24 via ${otherIp}`), "the other cluster's route stays");
            assert(routes().includes(`10.244.51.0/24 via ${otherIp}`), "and is not displaced");
            assertEquals(writes(), before, "no write at all");
            assertEquals(
              (await reasons(client, "node-5")).filter((r) => r === "RouteConflict").length,
              1,
              "said once",
            );
          },
        );
      } finally {
        await ccm.stop();
      }
    } finally {
      await close();
    }
  },
});
