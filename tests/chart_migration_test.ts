/**
 * The move from the official chart to ours, with the real Deployment and ReplicaSet controllers: a
 * release of the official chart's v1.35.0 shape (one replica, no leader election, its pod bound to a
 * Node so that its deletion waits as a running pod's does) is upgraded with a values file that leaves
 * `replicaCount` out (ours defaults to 2, the case that overlapped with a rolling update). At no moment
 * does a pod of ours exist beside the old CCM's pod; the objects are updated in place; `helm rollback`
 * restores the official objects; `helm upgrade --reuse-values` (helm then hands our templates the
 * official chart's values) works; our next release rolls; and a switch to a DaemonSet while a lease-less
 * CCM runs is refused, naming the way. Then the same for manifests: deploy/ccm-networks.yaml applied with
 * kubectl over the official release asset's Deployment (selector `app: hcloud-cloud-controller-manager`).
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { KubeControllerManager } from "../testing/kube_controller_manager.ts";
import { CHART, type Rendered, runHelm } from "../testing/helm.ts";
import { officialChart, officialManifest } from "../testing/official_chart.ts";
import { eventually } from "../testing/helpers.ts";

const REPO = new URL("..", import.meta.url).pathname;
const NS = "kube-system";
const NAME = "hcloud-cloud-controller-manager";
const OFFICIAL_IMAGE = /hetznercloud\/hcloud-cloud-controller-manager/;

Deno.test({
  name:
    "chart migration: never two CCMs at once, objects kept, rollback, --reuse-values, no lease-less DaemonSet switch",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const cluster = await TestCluster.start();
    const kcm = await KubeControllerManager.start(
      cluster,
      "10.244.0.0/16",
      "deployment-controller,replicaset-controller,garbage-collector-controller",
    );
    const official = await officialChart({ nodeName: "cp-1" });
    const env = { KUBECONFIG: cluster.kubeconfigPath };
    const helm = async (args: string[]) => {
      const r = await runHelm([...args, "--namespace", NS], env);
      assert(r.ok, `helm ${args.join(" ")}: ${r.stderr}`);
      return r.stdout;
    };
    const get = async (kind: string, name: string): Promise<Rendered | undefined> => {
      const out = await cluster.kubectl(["-n", NS, "get", kind, name, "-o", "json", "--ignore-not-found"]);
      return out.trim() ? JSON.parse(out) : undefined;
    };
    const pods = async (): Promise<Rendered[]> =>
      JSON.parse(await cluster.kubectl(["-n", NS, "get", "pods", "-o", "json"])).items;
    const isOfficial = (p: Rendered) => OFFICIAL_IMAGE.test(p.spec.containers[0].image);
    /**
     * Runs `replace` (an upgrade) while watching the pods every 100 ms: the old CCM's pod keeps running
     * (Terminating) for 3 s as a slow-exiting process would, then goes; ours must appear only after.
     */
    const replacesWithoutOverlap = async (replace: () => Promise<void>, expected = 2) => {
      const seen: string[] = [];
      let overlap = "";
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          const now = await pods();
          const old = now.filter(isOfficial);
          const ours = now.filter((p) => !isOfficial(p));
          const terminating = old.filter((p) => p.metadata.deletionTimestamp).length;
          seen.push(`${old.length} official (${terminating} terminating), ${ours.length} ours`);
          if (old.length && ours.length && !overlap) overlap = seen.at(-1)!;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      try {
        await replace();
        await eventually(async () => (await pods()).some((p) => p.metadata.deletionTimestamp), 30_000);
        await new Promise((r) => setTimeout(r, 3000));
        assertEquals(
          (await pods()).filter((p) => !isOfficial(p)),
          [],
          "no pod of ours while the old one runs",
        );
        // What the old pod's kubelet does once the process has exited.
        await cluster.kubectl(["-n", NS, "delete", "pods", "--all", "--grace-period=0", "--force"]);
        await eventually(
          async () => (await pods()).filter((p) => !isOfficial(p)).length === expected,
          30_000,
        );
      } finally {
        watching = false;
        await watcher;
      }
      assertEquals(overlap, "", `the official CCM and ours ran at once:\n${seen.join("\n")}`);
    };
    try {
      await cluster.createSecret(NS, "hcloud", { token: "t", network: "k8s" });
      await helm(["install", "hccm", official]);
      await eventually(async () => (await pods()).filter(isOfficial).length === 1, 30_000);
      const before = (await get("deployment", NAME))!;
      const account = (await get("serviceaccount", NAME))!;

      await t.step("upgrade: the old pod is gone before the first new one exists", async () => {
        await replacesWithoutOverlap(async () => {
          const notes = await helm(["upgrade", "hccm", CHART, "--set", "networking.enabled=true"]);
          assert(notes.includes("replacing what ran before with Recreate"), notes);
        });
        const after = (await get("deployment", NAME))!;
        assertEquals(after.metadata.uid, before.metadata.uid, "the Deployment is updated in place");
        assertEquals((await get("serviceaccount", NAME))!.metadata.uid, account.metadata.uid);
        assertEquals(
          await get("clusterrolebinding", "system:hcloud-cloud-controller-manager:restricted"),
          undefined,
        );
        assert(await get("clusterrolebinding", "system:hcloud-cloud-controller-manager:deno-ccm"));
        assert(after.spec.template.spec.containers[0].args.includes("--leader-elect=true"));
      });

      await t.step("rollback restores the official chart's objects", async () => {
        await helm(["rollback", "hccm", "1"]);
        const back = (await get("deployment", NAME))!;
        assertEquals(back.metadata.uid, before.metadata.uid);
        assertEquals(
          back.spec.template.spec.containers[0].image,
          before.spec.template.spec.containers[0].image,
        );
        assert(await get("clusterrole", "system:hcloud-cloud-controller-manager"));
        assert(await get("clusterrolebinding", "system:hcloud-cloud-controller-manager:restricted"));
        assertEquals(
          await get("clusterrolebinding", "system:hcloud-cloud-controller-manager:deno-ccm"),
          undefined,
        );
      });

      await t.step("a switch to a DaemonSet beside the lease-less Deployment is refused", async () => {
        const r = await runHelm(
          ["upgrade", "hccm", CHART, "--namespace", NS, "--set", "kind=DaemonSet"],
          env,
        );
        assert(!r.ok);
        assert(r.stderr.includes("upgrade with kind: Deployment first, then switch to DaemonSet"), r.stderr);
      });

      await t.step("--reuse-values: the official chart's values drive ours", async () => {
        const notes = await helm(["upgrade", "hccm", CHART, "--reuse-values"]);
        assert(
          notes.includes("is the official CCM's image: this chart runs ghcr.io/deno-ccm/deno-ccm:"),
          notes,
        );
        const d = (await get("deployment", NAME))!;
        const c = d.spec.template.spec.containers[0];
        assert(c.image.startsWith("ghcr.io/deno-ccm/deno-ccm:"), c.image);
        assertEquals(d.spec.replicas, 1, "the official release's replicaCount");
        assertEquals(d.spec.strategy.type, "Recreate");
        assert(c.args.includes("--leader-elect=true") && c.args.includes("--cluster-cidr=10.244.0.0/16"));
        assertEquals(d.spec.template.spec.securityContext.fsGroup, 65532, "v1.35's podSecurityContext kept");
        assertEquals(d.spec.template.spec.hostNetwork, true);
        // Our next release, from ours: a rolling update again (the lease keeps it to one CCM).
        await helm(["upgrade", "hccm", CHART, "--reuse-values", "--set", "replicaCount=2"]);
        const next = (await get("deployment", NAME))!;
        assertEquals(next.spec.strategy.type, "RollingUpdate");
        assertEquals(next.spec.strategy.rollingUpdate.maxSurge, 0);
      });
      await helm(["uninstall", "hccm"]);

      await t.step(
        "manifests: our ccm-networks.yaml over the official one, in place, no overlap",
        async () => {
          // The uninstalled release's ReplicaSets are collected; the old CCM's pod (bound to a Node
          // without kubelet) is removed as its kubelet would.
          const replicaSets = async () =>
            JSON.parse(await cluster.kubectl(["-n", NS, "get", "rs", "-o", "json"])).items.length;
          await eventually(async () => await replicaSets() === 0, 30_000);
          await cluster.kubectl(["-n", NS, "delete", "pods", "--all", "--grace-period=0", "--force"]);
          await cluster.kubectl(["apply", "-f", "-"], officialManifest());
          await eventually(async () => (await pods()).filter(isOfficial).length === 1, 30_000);
          const official = (await get("deployment", NAME))!;
          await replacesWithoutOverlap(async () => {
            await cluster.kubectl(["apply", "-f", `${REPO}deploy/ccm-networks.yaml`]);
          });
          const ours = (await get("deployment", NAME))!;
          assertEquals(ours.metadata.uid, official.metadata.uid, "kubectl apply updates it in place");
          assertEquals(ours.spec.strategy.type, "Recreate");
        },
      );
    } finally {
      await Deno.remove(official, { recursive: true });
      await kcm.stop();
      await cluster.stop();
    }
  },
});
