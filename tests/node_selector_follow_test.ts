/**
 * `load-balancer.hetzner.cloud/node-selector` follows Node label changes (HCCM #519): removing the
 * label drains the Node from the balancers whose selector no longer matches, adding it back restores
 * it, and balancers the change does not affect cost no cloud call.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES, SERVICES } from "../kube/resources.ts";

const P = "load-balancer.hetzner.cloud/";

function service(name: string, selector?: string): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace: "default",
      annotations: { [`${P}location`]: "fsn1", ...(selector ? { [`${P}node-selector`]: selector } : {}) },
    },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ port: 80, protocol: "TCP" }] },
  };
}

Deno.test({
  name: "node-selector: a Node label change drains or restores it on the balancers it affects, only those",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    const servers = [1, 2, 3].map((i) => sim.addServer({ name: `n${i}`, location: "fsn1" }));
    for (const i of [1, 2, 3]) {
      await registerNode(client, `n${i}`, { labels: { pool: "edge", zone: "a" } });
    }
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"]);
    const lbOf = async (name: string) => {
      const uid = (await client.get(SERVICES, name, { namespace: "default" })).metadata!.uid!;
      return [...sim.world.loadBalancers.values()].find((lb) => lb.labels["hcloud-ccm/service-uid"] === uid);
    };
    const targets = async (name: string) => {
      const lb = await lbOf(name);
      return lb ? targetServerIds(sim.world, lb) : [];
    };
    const ids = (...n: number[]) => n.map((i) => servers[i - 1].id).sort((a, b) => a - b);
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      await client.create(SERVICES, service("edge", "pool=edge"));
      await client.create(SERVICES, service("zone", "zone=a"));
      // A balancer without a selector targets the servers by label (set by its first ensure).
      await client.create(SERVICES, service("all"));
      await eventually(async () => JSON.stringify(await targets("all")) === JSON.stringify(ids(1, 2, 3)));
      await eventually(async () => JSON.stringify(await targets("edge")) === JSON.stringify(ids(1, 2, 3)));
      await eventually(async () => JSON.stringify(await targets("zone")) === JSON.stringify(ids(1, 2, 3)));
      const zoneId = (await lbOf("zone"))!.id;
      const edgeId = (await lbOf("edge"))!.id;
      const allId = (await lbOf("all"))!.id;
      await new Promise((r) => setTimeout(r, 1000)); // let the creation settle

      // n1 leaves the edge pool (before a reboot, say): drained from "edge" only.
      const mark = sim.audit.length;
      await client.patch(NODES, "n1", "json", [{ op: "remove", path: "/metadata/labels/pool" }]);
      await eventually(async () => JSON.stringify(await targets("edge")) === JSON.stringify(ids(2, 3)));
      await new Promise((r) => setTimeout(r, 1000));
      const calls = sim.audit.slice(mark);
      const writes = calls.filter((c) => c.method !== "GET").map((c) => `${c.method} ${c.path}`);
      assertEquals(writes, [`POST /load_balancers/${edgeId}/actions/remove_target`]);
      assertEquals(
        calls.filter((c) => c.path.includes(`/load_balancers/${zoneId}`)),
        [],
        "zone is untouched",
      );
      assertEquals(calls.filter((c) => c.path.includes(`/load_balancers/${allId}`)), [], "all is untouched");
      assertEquals(JSON.stringify(await targets("zone")), JSON.stringify(ids(1, 2, 3)));
      await eventually(async () =>
        (await eventsOf(client, "edge")).some((e) => e.startsWith("Normal UpdatedLoadBalancer"))
      );

      // Back in the pool: restored.
      await client.patch(NODES, "n1", "merge", { metadata: { labels: { pool: "edge" } } });
      await eventually(async () => JSON.stringify(await targets("edge")) === JSON.stringify(ids(1, 2, 3)));
    } finally {
      await close(ccm);
    }
  },
});
