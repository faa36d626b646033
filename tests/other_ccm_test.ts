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
import { DAEMON_SETS, DEPLOYMENTS, EVENTS, LEASES, NODES } from "../kube/resources.ts";

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

Deno.test({
  name:
    "other CCM: the official DaemonSet an installer leaves behind (hcloud-k8s, hcloud-talos): ours installed beside it stands by, and acts once it is deleted",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // The runbooks of Talos installers: the installer's CCM switched off (`hcloud_ccm_enabled = false`,
    // `deploy_hcloud_ccm = false`) leaves its workload running — neither Talos's inline manifests nor
    // `apply_only` delete anything — and ours is installed beside it, then the old one is deleted.
    const { cluster, sim, client, close } = await testEnvironment();
    const kcm = await KubeControllerManager.start(
      cluster,
      "10.244.0.0/16",
      "daemonset-controller,garbage-collector-controller",
    );
    const controlPlane = { "node-role.kubernetes.io/control-plane": "" };
    sim.addServer({ name: "cp-1", ipv4: "203.0.113.83" });
    sim.addServer({ name: "node-c", ipv4: "203.0.113.84" });
    await registerNode(client, "cp-1", { labels: controlPlane });
    // hcloud-k8s renders the official chart as a DaemonSet on the control planes, with leader election.
    const deployment = JSON.parse(officialManifest());
    const template = deployment.spec.template;
    delete template.spec.nodeName;
    template.spec.nodeSelector = controlPlane;
    template.spec.tolerations = [{ operator: "Exists" }];
    template.spec.containers[0].args = [
      "--allow-untagged-cloud",
      "--cloud-provider=hcloud",
      "--leader-elect=true",
    ];
    await client.create(DAEMON_SETS, {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "hcloud-cloud-controller-manager", namespace: "kube-system" },
      spec: { selector: deployment.spec.selector, template },
    }, { namespace: "kube-system" });
    await eventually(
      async () =>
        ((await client.get(DAEMON_SETS, "hcloud-cloud-controller-manager", { namespace: "kube-system" })) as {
          status?: { currentNumberScheduled?: number };
        }).status?.currentNumberScheduled === 1,
      30_000,
    );

    const port = freePort();
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node",
      "--leader-elect=true",
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
    ]);
    const initialized = async (name: string) => !!(await client.get(NODES, name)).spec?.providerID;
    try {
      let report = "";
      await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/readyz?verbose`);
        report = await res.text();
        return res.status === 503 && report.includes("DaemonSet kube-system/hcloud-cloud-controller-manager");
      }, 20_000);
      await registerNode(client, "node-c");
      await new Promise((r) => setTimeout(r, 3_000));
      assertEquals([await initialized("cp-1"), await initialized("node-c")], [false, false], report);

      // The runbook's deletion: in the foreground, so the DaemonSet stays until its pods are gone.
      await client.delete(DAEMON_SETS, "hcloud-cloud-controller-manager", {
        namespace: "kube-system",
        propagationPolicy: "Foreground",
      });
      await eventually(async () => (await initialized("cp-1")) && (await initialized("node-c")), 30_000);
    } finally {
      await kcm.stop();
      await close(ccm);
    }
  },
});
