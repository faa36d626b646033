/**
 * Server labels become Node labels and stay in step (HCCM #41, #866), against a real apiserver and
 * the simulator: the labels matching HCLOUD_INSTANCES_SERVER_LABELS are copied at initialization,
 * follow changes and removals at the address refresh, and labels the CCM did not write are never
 * touched.
 */
import { assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NODES } from "../kube/resources.ts";

const S = "server.hetzner.cloud/";

Deno.test({
  name: "server labels: copied as Node labels, kept in step, others' labels untouched",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const server = s.sim.addServer({ name: "w1", ipv4: "203.0.113.80" });
    const setServerLabels = async (labels: Record<string, string>) => {
      const r = await s.api("PUT", `/servers/${server.id}`, { labels });
      assertEquals(r.status, 200);
    };
    await setServerLabels({ team: "payments", "example.com/tier": "gold", secret: "x" });
    await registerNode(client, "w1", { labels: { [`${S}owner`]: "ops" } });
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node",
      "--node-status-update-frequency=1s",
    ], {
      HCLOUD_INSTANCES_SERVER_LABELS: "team,example.com/*,owner",
      HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
    });
    const ours = async () => {
      const labels = (await client.get(NODES, "w1")).metadata?.labels ?? {};
      return Object.fromEntries(Object.entries(labels).filter(([k]) => k.startsWith(S)).sort());
    };
    try {
      await eventually(async () =>
        JSON.stringify(await ours()) === JSON.stringify({
          [`${S}example.com.tier`]: "gold",
          [`${S}owner`]: "ops",
          [`${S}team`]: "payments",
        })
      );

      // Changed and removed in the cloud (the console, Terraform): followed at the refresh. The
      // server's "owner" label does not overwrite the Node's own one.
      await setServerLabels({ team: "billing", owner: "someone-else" });
      await eventually(async () =>
        JSON.stringify(await ours()) === JSON.stringify({
          [`${S}owner`]: "ops",
          [`${S}team`]: "billing",
        })
      );
      await eventually(async () =>
        (await eventsOf(client, "w1")).some((e) =>
          e.startsWith("Warning SyncedLabelConflict") && e.includes(`${S}owner`)
        )
      );
      await setServerLabels({});
      await eventually(async () => JSON.stringify(await ours()) === JSON.stringify({ [`${S}owner`]: "ops" }));
    } finally {
      await close(ccm);
    }
  },
});
