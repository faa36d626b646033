/**
 * Two clusters in one Hetzner project, both with the default `--cluster-name=kubernetes`: each
 * CCM labels, targets and changes only its own servers and load balancers, and a third party
 * rewriting server labels (a Terraform `labels` block) is repaired.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { adminClient, registerNode } from "../testing/ccm_harness.ts";
import { type CcmProcess, spawnCcm } from "../testing/ccm_process.ts";
import { eventually } from "../testing/helpers.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NAMESPACES, SERVICES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/client.ts";

const TARGET_LABEL = "deno-ccm/lb-target";

Deno.test({
  name: "two clusters, one project: neither touches the other's servers or load balancers; labels repaired",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const s = await startTestSim({ actionDurationMs: 100 });
    const clusters = [await TestCluster.start(), await TestCluster.start()];
    const ccms: CcmProcess[] = [];
    try {
      const names = ["a", "b"];
      const servers = names.map((c) =>
        [0, 1].map((i) => s.sim.addServer({ name: `${c}-${i}`, location: "fsn1" }))
      );
      const clients: KubeClient[] = [];
      const identities: string[] = [];
      for (const [k, cluster] of clusters.entries()) {
        const client = await adminClient(cluster);
        clients.push(client);
        identities.push((await client.get(NAMESPACES, "kube-system")).metadata!.uid!);
        for (const server of servers[k]) await registerNode(client, server.name, { podCIDRs: [] });
        ccms.push(spawnCcm([
          `--kubeconfig=${cluster.kubeconfigPath}`,
          "--leader-elect=false",
          "--node-status-update-frequency=1s",
          "--controllers=cloud-node,service",
        ], {
          HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
          HCLOUD_ENDPOINT: s.sim.endpoint,
          HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
          HCLOUD_LOAD_BALANCERS_TYPE: "lb11",
        }));
        await client.create<Service>(SERVICES, {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "web", namespace: "default" },
          spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 80, protocol: "TCP" }] },
        }, { namespace: "default" });
      }
      const uidOf = async (k: number) =>
        (await clients[k].get(SERVICES, "web", { namespace: "default" })).metadata!.uid!;
      const lbOf = async (k: number) => {
        const uid = await uidOf(k);
        return [...s.sim.world.loadBalancers.values()].find((lb) =>
          lb.labels["hcloud-ccm/service-uid"] === uid
        );
      };
      const targets = async (k: number) => {
        const lb = await lbOf(k);
        return lb ? targetServerIds(s.sim.world, lb).map((id) => s.sim.world.servers.get(id)!.name) : [];
      };
      await eventually(
        async () => (await targets(0)).length === 2 && (await targets(1)).length === 2,
        30_000,
      );
      assertEquals(await targets(0), ["a-0", "a-1"]);
      assertEquals(await targets(1), ["b-0", "b-1"]);
      for (const [k, list] of servers.entries()) {
        for (const server of list) assertEquals(server.labels[TARGET_LABEL], identities[k], server.name);
      }

      // A third party replaces a-0's labels (no action records it): the lost-balancer check (every second
      // here) sees its balancer resolve one server fewer and restores ours from a full list.
      const a0 = servers[0][0];
      const put = await s.api("PUT", `/servers/${a0.id}`, { labels: { managed: "terraform" } });
      assertEquals(put.status, 200);
      await eventually(() => a0.labels[TARGET_LABEL] === identities[0], 15_000);
      assertEquals(a0.labels.managed, "terraform", "labels we did not write stay");
      assertEquals(await targets(0), ["a-0", "a-1"]);

      // Every mutating call of each CCM touched only its own servers and its own load balancer.
      const own = [0, 1].map((k) => ({
        servers: new Set(servers[k].map((x) => x.id)),
        pid: ccms[k].child.pid,
      }));
      const lbIds = [(await lbOf(0))!.id, (await lbOf(1))!.id];
      for (const e of s.sim.audit) {
        if (e.method === "GET") continue;
        const k = own.findIndex((o) => e.userAgent.includes(`pid ${o.pid})`));
        if (k < 0) continue; // the test's own call
        const id = Number(e.path.match(/^\/(?:servers|load_balancers)\/(\d+)/)?.[1]);
        if (e.path.startsWith("/servers/")) {
          assert(own[k].servers.has(id), `CCM ${names[k]}: ${e.method} ${e.path}`);
        }
        if (e.path.startsWith("/load_balancers/")) {
          assertEquals(id, lbIds[k], `CCM ${names[k]}: ${e.method} ${e.path}`);
        }
      }
    } finally {
      for (const ccm of ccms) {
        ccm.child.kill("SIGTERM");
        await ccm.status;
      }
      for (const c of clusters) await c.stop();
      await s.finish();
    }
  },
});
