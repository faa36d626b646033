/**
 * Node and Node Lifecycle controllers against a real kube-apiserver and the simulator.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { kubeletNode, registerNode, setReady, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { NODES } from "../kube/resources.ts";
import { hasTaint } from "../controllers/mod.ts";
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../kube/well_known.ts";
import type { KubeClient } from "../kube/client.ts";

const NETWORK = {
  networks: [{
    name: "k8s",
    ip_range: "10.0.0.0/8",
    subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
  }],
};

async function initialized(client: KubeClient, name: string): Promise<Node> {
  let node: Node | undefined;
  await eventually(async () => {
    node = await client.get(NODES, name);
    return !hasTaint(node, UNINITIALIZED_TAINT);
  }, 30_000);
  return node!;
}

Deno.test({
  name: "node controllers against a real apiserver and the simulator",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { cluster, s, client, close } = await testEnvironment();
    const sim = s.sim;
    applySeed(sim, NETWORK);
    const ipv4Args = ["--controllers=cloud-node,cloud-node-lifecycle", "--node-monitor-period=1s"];
    const env = { HCLOUD_NETWORK: "k8s", HCLOUD_SERVER_CACHE_MAX_AGE: "1s" };
    try {
      await t.step(
        "initialization: exact labels, addresses and provider ID; IP fallback; name mismatch keeps the taint",
        async () => {
          const cp = sim.addServer({
            name: "cp-1",
            server_type: "cpx21",
            location: "fsn1",
            private_net: [{ network: "k8s" }],
          });
          const wg = sim.addServer({
            name: "wg-server",
            server_type: "cx22",
            location: "hel1",
            private_net: [{ network: "k8s" }],
          });
          const pre = sim.addServer({ name: "pre-set", server_type: "cax11", location: "nbg1" });
          await registerNode(client, "cp-1", { nodeIp: cp.private_net[0].ip });
          await registerNode(client, "wireguard-7", { nodeIp: wg.private_net[0].ip });
          await registerNode(client, "custom-name", { providerID: `hcloud://${pre.id}` });
          await registerNode(client, "no-such-server", { nodeIp: "10.99.0.1" });
          await setReady(client, "no-such-server", true); // its kubelet is alive
          const ccm = await startCcm(cluster, sim, ipv4Args, env);
          try {
            const node = await initialized(client, "cp-1");
            assertEquals(node.spec?.providerID, `hcloud://${cp.id}`);
            const labels = node.metadata!.labels!;
            assertEquals(
              Object.fromEntries(
                // Without the kubelet's own labels.
                Object.entries(labels).filter(([k]) => !(k in kubeletNode("cp-1").metadata!.labels!)).sort(),
              ),
              {
                "beta.kubernetes.io/instance-type": "cpx21",
                "failure-domain.beta.kubernetes.io/region": "fsn1",
                "failure-domain.beta.kubernetes.io/zone": "fsn1-dc14",
                "instance.hetzner.cloud/provided-by": "cloud",
                "node.kubernetes.io/instance-type": "cpx21",
                "topology.kubernetes.io/region": "fsn1",
                "topology.kubernetes.io/zone": "fsn1-dc14",
              },
            );
            assertEquals(node.status?.addresses, [
              { type: "InternalIP", address: cp.private_net[0].ip! },
              { type: "Hostname", address: "cp-1" },
              { type: "ExternalIP", address: cp.public_net.ipv4!.ip },
            ]);
            // Only our taint is removed; the apiserver's not-ready taint (TaintNodesByCondition) stays.
            assertEquals((node.spec?.taints ?? []).map((t) => t.key), ["node.kubernetes.io/not-ready"]);
            await eventually(async () =>
              (await eventsOf(client, "cp-1")).includes("Normal Synced: Node synced successfully")
            );

            const byIp = await initialized(client, "wireguard-7");
            assertEquals(byIp.spec?.providerID, `hcloud://${wg.id}`);
            assertEquals(byIp.metadata?.labels?.["topology.kubernetes.io/zone"], "hel1-dc2");
            const preset = await initialized(client, "custom-name");
            assertEquals([
              preset.spec?.providerID,
              preset.metadata?.labels?.["node.kubernetes.io/instance-type"],
            ], [`hcloud://${pre.id}`, "cax11"]);

            await eventually(async () =>
              (await eventsOf(client, "no-such-server")).some((e) =>
                e.startsWith("Warning InstanceNotFound: no cloud server named")
              )
            );
            const stuck = await client.get(NODES, "no-such-server");
            assert(hasTaint(stuck, UNINITIALIZED_TAINT), "an unmatched node keeps the taint");
          } finally {
            await ccm.stop();
          }
          // Ready (a live kubelet): never deleted although no server matches it.
          assert(await client.get(NODES, "no-such-server"));
        },
      );

      await t.step("address families: IPv6 only and dual-stack", async () => {
        const v6 = sim.addServer({ name: "v6-node", ipv4: false });
        const dual = sim.addServer({ name: "dual-node" });
        await registerNode(client, "v6-node");
        const ccm6 = await startCcm(cluster, sim, ["--controllers=cloud-node"], {
          ...env,
          HCLOUD_INSTANCES_ADDRESS_FAMILY: "ipv6",
        });
        try {
          const node = await initialized(client, "v6-node");
          assertEquals(node.status?.addresses, [
            { type: "Hostname", address: "v6-node" },
            { type: "ExternalIP", address: v6.public_net.ipv6!.ip.replace("::/64", "::1") },
          ]);
        } finally {
          await ccm6.stop();
        }
        await registerNode(client, "dual-node");
        const ccmDual = await startCcm(cluster, sim, ["--controllers=cloud-node"], {
          HCLOUD_INSTANCES_ADDRESS_FAMILY: "dualstack",
        });
        try {
          const node = await initialized(client, "dual-node");
          assertEquals(node.status?.addresses, [
            { type: "Hostname", address: "dual-node" },
            { type: "ExternalIP", address: dual.public_net.ipv4!.ip },
            { type: "ExternalIP", address: dual.public_net.ipv6!.ip.replace("::/64", "::1") },
          ]);
        } finally {
          await ccmDual.stop();
        }
      });

      await t.step(
        "lifecycle: server off → shutdown taint; on and Ready → removed; deleted → Node deleted; outage deletes nothing",
        async () => {
          const a = sim.addServer({ name: "life-a" });
          const b = sim.addServer({ name: "life-b" });
          await registerNode(client, "life-a");
          await registerNode(client, "life-b");
          const ccm = await startCcm(cluster, sim, ipv4Args, env);
          try {
            await initialized(client, "life-a");
            await initialized(client, "life-b");
            await setReady(client, "life-a", false);
            sim.control.setPower(a.id, false);
            await eventually(async () => hasTaint(await client.get(NODES, "life-a"), SHUTDOWN_TAINT), 10_000);
            sim.control.setPower(a.id, true);
            await setReady(client, "life-a", true);
            await eventually(
              async () => !hasTaint(await client.get(NODES, "life-a"), SHUTDOWN_TAINT),
              10_000,
            );

            // An outage: every server request fails. NotReady nodes stay.
            await setReady(client, "life-b", false);
            sim.control.setFaults({ rules: [{ match: "^GET /servers", status: 503, code: "unavailable" }] });
            sim.control.vanishServer(b.id);
            await new Promise((r) => setTimeout(r, 4_000));
            assert(await client.get(NODES, "life-b"), "no Node is deleted while the API fails");
            sim.control.setFaults({ rules: [] });
            const deletedAt = Date.now();
            await eventually(
              async () => !(await client.list(NODES)).items.some((n) => n.metadata?.name === "life-b"),
              10_000,
            );
            // Monitor period 1 s and cache max age 1 s: two periods plus the outage's retry backoff.
            assert(Date.now() - deletedAt < 10_000);
            assertEquals(
              (await eventsOf(client, "life-b")).some((e) => e.startsWith("Normal DeletingNode")),
              true,
            );
          } finally {
            await ccm.stop();
          }
        },
      );

      await t.step(
        "address refresh: action-logged changes read by server ID; a rename by the slow full list",
        async () => {
          // A Node no server matches is retried with a full list each time: not part of this count.
          for (const n of (await client.list(NODES)).items) {
            if (hasTaint(n, UNINITIALIZED_TAINT)) await client.delete(NODES, n.metadata!.name!);
          }
          // Enough servers that a full list (3 pages) costs more than reading the one that changed.
          for (let i = 0; i < 100; i++) sim.addServer({ name: `other-${i}` });
          const r1 = sim.addServer({ name: "refresh-1", private_net: [{ network: "k8s" }] });
          sim.addServer({ name: "refresh-2", private_net: [{ network: "k8s" }] });
          await registerNode(client, "refresh-1");
          await registerNode(client, "refresh-2");
          const ccm = await startCcm(cluster, sim, [
            "--controllers=cloud-node",
            "--node-status-update-frequency=2s",
          ], { ...env, HCLOUD_SERVER_FULL_LIST_PERIOD: "6s" });
          try {
            await initialized(client, "refresh-1");
            await initialized(client, "refresh-2");
            const network = sim.world.findNetwork("k8s")!;
            const start = sim.audit.length;
            // Through the API (detach and attach actions): the refresh follows the action log.
            sim.control.moveServerIp(r1.id, network.id, "10.0.200.7");
            await eventually(
              async () =>
                (await client.get(NODES, "refresh-1")).status?.addresses?.some((a) =>
                  a.address === "10.0.200.7"
                ) ?? false,
              10_000,
            );
            // No full list: the action logs name the one server that changed, read once.
            const calls = sim.audit.slice(start);
            assertEquals(calls.filter((e) => e.route === "GET /servers").length, 0);
            const reads = calls.filter((e) => e.route === "GET /servers/{id}");
            assert(
              reads.length >= 1 && reads.every((e) => e.path.endsWith(`/${r1.id}`)),
              JSON.stringify(reads),
            );

            // A rename is no action: the slow full list (6 s here) brings the new hostname.
            sim.control.renameServer(r1.id, "refresh-1-renamed");
            const renamedAt = sim.audit.length;
            await eventually(
              async () =>
                (await client.get(NODES, "refresh-1")).status?.addresses?.some((a) =>
                  a.type === "Hostname" && a.address === "refresh-1-renamed"
                ) ?? false,
              15_000,
            );
            assert(sim.audit.slice(renamedAt).some((e) => e.route === "GET /servers"), "by a full list");
          } finally {
            await ccm.stop();
          }
        },
      );

      await t.step(
        "cost: 200 nodes joining together, and 50 NotReady nodes monitored, use O(1) server lists",
        async () => {
          for (let i = 0; i < 200; i++) {
            // Not in the network: it holds 100 servers at most (the list cost does not depend on it).
            sim.addServer({ name: `burst-${i}` });
          }
          const before = sim.audit.length;
          const ccm = await startCcm(cluster, sim, [...ipv4Args, "--concurrent-node-syncs=10"], {
            ...env,
            HCLOUD_SERVER_CACHE_MAX_AGE: "10s",
          });
          try {
            await Promise.all(Array.from({ length: 200 }, (_, i) => registerNode(client, `burst-${i}`)));
            await eventually(async () => {
              const nodes = await client.list(NODES, { labelSelector: "node.kubernetes.io/instance-type" });
              return nodes.items.filter((n) => n.metadata!.name!.startsWith("burst-")).length === 200;
            }, 60_000);
            const calls = sim.audit.slice(before);
            const lists = calls.filter((e) => e.route === "GET /servers").length;
            const pages = Math.ceil(sim.world.servers.size / 50);
            // Lists happen per cache max age (and once for Nodes newer than the snapshot), never per node.
            assert(
              lists <= pages * 4,
              `${lists} list requests for 200 joining nodes (${pages} pages per list)`,
            );
            assertEquals(calls.filter((e) => e.route === "GET /servers/{id}").length, 0);

            // 50 of them NotReady, checked every second for 6 s.
            const start = sim.audit.length;
            for (let i = 0; i < 50; i++) await setReady(client, `burst-${i}`, false);
            await new Promise((r) => setTimeout(r, 6_000));
            const monitorLists = sim.audit.slice(start).filter((e) => e.route === "GET /servers").length;
            assert(
              monitorLists <= pages * 2,
              `${monitorLists} list requests for 50 NotReady nodes over 6 monitor periods`,
            );
          } finally {
            await ccm.stop();
          }
        },
      );
    } finally {
      await close();
    }
  },
});
