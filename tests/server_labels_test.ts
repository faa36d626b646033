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

Deno.test({
  name: "server labels: a forged synced-labels record never removes labels the CCM did not write (probe N7)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const server = s.sim.addServer({ name: "w2", ipv4: "203.0.113.81" });
    const guarded = {
      "node-role.kubernetes.io/control-plane": "",
      "node-restriction.kubernetes.io/isolated": "true",
    };
    await registerNode(client, "w2", { labels: guarded });
    // What a kubelet may write on its own Node: the CCM's record, naming labels the CCM never wrote.
    await client.patch(NODES, "w2", "merge", {
      metadata: {
        annotations: {
          "node.deno-ccm.io/synced-labels":
            "kubernetes.io/hostname,node-role.kubernetes.io/control-plane,node-restriction.kubernetes.io/isolated",
        },
      },
    });
    // The label sync is off (HCLOUD_INSTANCES_SERVER_LABELS unset), as by default.
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node",
      "--node-status-update-frequency=1s",
    ], {
      HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
    });
    try {
      await eventually(async () => !!(await client.get(NODES, "w2")).spec?.providerID);
      // A console rename shows in the Hostname address at the next refresh: the refresh has run.
      s.sim.control.renameServer(server.id, "w2-renamed");
      await eventually(async () =>
        (await client.get(NODES, "w2")).status?.addresses?.some((a) => a.address === "w2-renamed") ?? false
      );
      const labels = (await client.get(NODES, "w2")).metadata?.labels ?? {};
      for (const [key, value] of Object.entries({ ...guarded, "kubernetes.io/hostname": "w2" })) {
        assertEquals(labels[key], value, `${key} is still there`);
      }
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name:
    "server labels as taints: on the Node before it is initialized, kept in step, others' taints untouched",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const server = s.sim.addServer({ name: "w3", ipv4: "203.0.113.82" });
    const setServerLabels = async (labels: Record<string, string>) => {
      const r = await s.api("PUT", `/servers/${server.id}`, { labels });
      assertEquals(r.status, 200);
    };
    await setServerLabels({ dedicated: "gpu", "spot-pool": "a", team: "x" });
    await registerNode(client, "w3");
    const theirs = { key: "example.com/maintenance", value: "soon", effect: "NoExecute" };
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node",
      "--node-status-update-frequency=1s",
    ], {
      HCLOUD_INSTANCES_SERVER_TAINTS: "dedicated:NoExecute,spot*",
      HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
    });
    // Ours and the one someone else sets (the apiserver adds its own not-ready taint too).
    const taints = async () =>
      ((await client.get(NODES, "w3")).spec?.taints ?? []).filter((t) =>
        !t.key.startsWith("node.kubernetes.io/")
      )
        .map((t) => `${t.key}=${t.value ?? ""}:${t.effect}`).sort();
    try {
      // The taints come in the write that lifts the uninitialized taint: never one without the other.
      await eventually(async () => !(await taints()).some((t) => t.startsWith("node.cloudprovider")));
      assertEquals(await taints(), [`${S}dedicated=gpu:NoExecute`, `${S}spot-pool=a:NoSchedule`]);
      const node = await client.get(NODES, "w3");
      await client.patch(NODES, "w3", "merge", { spec: { taints: [...node.spec!.taints!, theirs] } });

      await setServerLabels({ dedicated: "fpga" });
      await eventually(async () =>
        JSON.stringify(await taints()) ===
          JSON.stringify([`${S}dedicated=fpga:NoExecute`, "example.com/maintenance=soon:NoExecute"].sort())
      );
      await setServerLabels({});
      await eventually(async () =>
        JSON.stringify(await taints()) === JSON.stringify(["example.com/maintenance=soon:NoExecute"])
      );
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name:
    "server labels: a startup taint comes with the initialization and is not put back once lifted; a synced one is",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const server = s.sim.addServer({ name: "w4", ipv4: "203.0.113.84" });
    const r = await s.api("PUT", `/servers/${server.id}`, { labels: { setup: "pending", dedicated: "gpu" } });
    assertEquals(r.status, 200);
    await registerNode(client, "w4");
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node",
      "--node-status-update-frequency=1s",
    ], {
      HCLOUD_INSTANCES_SERVER_TAINTS: "dedicated",
      HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS: "setup:NoExecute",
      HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
    });
    const taints = async () =>
      ((await client.get(NODES, "w4")).spec?.taints ?? []).filter((t) => t.key.startsWith(S))
        .map((t) => `${t.key}=${t.value ?? ""}:${t.effect}`).sort();
    const refreshes = () => ccm.registry.counter("hcloud_api_requests_total", "").total();
    try {
      await eventually(async () => (await taints()).length === 2);
      assertEquals(await taints(), [`${S}dedicated=gpu:NoSchedule`, `${S}setup=pending:NoExecute`]);
      // The Node's agent is done: it lifts both. The synced one comes back, the startup one does not.
      await client.patch(NODES, "w4", "merge", { spec: { taints: [] } });
      await eventually(async () => (await taints()).length === 1);
      const seen = refreshes();
      await eventually(() => Promise.resolve(refreshes() >= seen + 2), 10_000); // two more refreshes
      assertEquals(await taints(), [`${S}dedicated=gpu:NoSchedule`]);
    } finally {
      await close(ccm);
    }
  },
});
