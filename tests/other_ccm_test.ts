/**
 * Two CCMs never act at once (issue 61 item 3), by the CCM itself and not only by the chart's update
 * strategy: the official release asset re-applied beside ours (one replica, `--leader-elect=false`, so
 * no lease keeps the two apart), with the real Deployment and ReplicaSet controllers. Ours steps down
 * as soon as the official CCM's ReplicaSet asks for a pod: its term ends and its lease is released,
 * `/readyz` and a Warning event on the official Deployment name it, and a Node that joins meanwhile is
 * left to the other CCM. Scaled to 0, the official CCM is gone for ours: it takes the lease again and
 * the waiting Node is initialized.
 */
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually, freePort } from "../testing/helpers.ts";
import { KubeControllerManager } from "../testing/kube_controller_manager.ts";
import { officialManifest } from "../testing/official_chart.ts";
import { DEPLOYMENTS, EVENTS, LEASES, NODES } from "../kube/resources.ts";

Deno.test({
  name:
    "other CCM: ours stands by while the re-applied official asset runs, and acts again once it is scaled to 0",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    const kcm = await KubeControllerManager.start(
      cluster,
      "10.244.0.0/16",
      "deployment-controller,replicaset-controller",
    );
    const port = freePort();
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node",
      "--leader-elect=true",
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
    ]);
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz?verbose`);
      return { status: res.status, text: await res.text() };
    };
    const holder = async () =>
      (await client.get(LEASES, "cloud-controller-manager", { namespace: "kube-system" }) as Lease).spec
        ?.holderIdentity ?? "";
    const initialized = async (name: string) => !!(await client.get(NODES, name)).spec?.providerID;
    try {
      sim.addServer({ name: "node-a", ipv4: "203.0.113.80" });
      sim.addServer({ name: "node-b", ipv4: "203.0.113.81" });
      await registerNode(client, "node-a");
      await eventually(() => initialized("node-a"), 30_000);
      assert((await holder()) !== "", "ours leads");

      // An installer applies the official asset again (unbound to a Node here: no kubelet runs).
      const official = JSON.parse(officialManifest());
      delete official.spec.template.spec.nodeName;
      await client.create(DEPLOYMENTS, official, { namespace: "kube-system" });
      await eventually(async () => (await holder()) === "", 30_000);
      let report = { status: 0, text: "" };
      await eventually(async () => (report = await readyz()).status === 503, 10_000);
      assert(
        report.text.includes(
          "Deployment kube-system/hcloud-cloud-controller-manager runs docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.35.0",
        ),
        report.text,
      );
      await eventually(
        async () =>
          (await client.list(EVENTS, { namespace: "kube-system" })).items.some((e) =>
            e.reason === "OtherCloudControllerManager" && e.involvedObject.kind === "Deployment" &&
            e.involvedObject.name === "hcloud-cloud-controller-manager" && e.type === "Warning"
          ),
        10_000,
      );

      // A Node joining now is the other CCM's to initialize: ours runs no controller and holds no lease.
      await registerNode(client, "node-b");
      assertEquals(await initialized("node-b"), false);
      assertEquals(await holder(), "");

      // Scaled to 0 (the runbook's first step): its pod goes, ours leads again and catches up.
      await client.patch(DEPLOYMENTS, "hcloud-cloud-controller-manager", "merge", { spec: { replicas: 0 } }, {
        namespace: "kube-system",
      });
      await eventually(() => initialized("node-b"), 30_000);
      assert((await holder()) !== "", "ours leads again");
      await eventually(async () => (await readyz()).status === 200, 10_000);
    } finally {
      await kcm.stop();
      await close(ccm);
    }
  },
});

Deno.test({
  name:
    "other CCM: two replicas of ours patched to --leader-elect=false in a pod (kube-hetzner's kustomize patch): one acts",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    // What a pod's in-cluster config is to the CCM (the token and address are the test's own).
    const inPod = { ...await cluster.adminConnection(), source: "in-cluster" };
    const args = ["--controllers=cloud-node", "--leader-elect=false"];
    const a = await startCcm(cluster, sim, args, {}, inPod);
    const b = await startCcm(cluster, sim, args, {}, inPod);
    const leading = () =>
      [a, b].map((c) =>
        c.registry.gauge("leader_election_master_status", "").get({ name: "cloud-controller-manager" })
      );
    try {
      sim.addServer({ name: "node-a", ipv4: "203.0.113.82" });
      await registerNode(client, "node-a");
      await eventually(async () => !!(await client.get(NODES, "node-a")).spec?.providerID, 30_000);
      const lease = await client.get(LEASES, "cloud-controller-manager", {
        namespace: "kube-system",
      }) as Lease;
      assert(lease.spec?.holderIdentity, "the lease is held although both run with --leader-elect=false");
      assertEquals(leading().sort(), [0, 1]);
    } finally {
      await a.stop();
      await close(b);
    }
  },
});
