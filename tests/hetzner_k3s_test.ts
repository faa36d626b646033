/**
 * hetzner-k3s' manifest path, run against our release assets (its
 * `src/kubernetes/software/hetzner/cloud_controller_manager.cr`, 2026-06): it downloads the `-networks`
 * asset, or the plain one when private networking is off (the URL with `-networks` removed); rewrites
 * `--cluster-cidr=[^"]+` to its cluster CIDR; with Robot node pools inserts `ROBOT_ENABLED: "true"` after
 * the env item `- name: ROBOT_USER` (and stops when there is none); applies it; then waits for
 * `rollout status deployment/hcloud-cloud-controller-manager`. Here each step runs as it does there on
 * `deploy/ccm-networks.yaml` and `deploy/ccm.yaml`, the result is applied to a real apiserver with the
 * Deployment controller, and the Deployment is read back: its arguments and environment are what the CCM
 * accepts and what hetzner-k3s asked for, from its Secret `hcloud`. The rollout needs a kubelet; not run.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { KubeControllerManager } from "../testing/kube_controller_manager.ts";
import { eventually } from "../testing/helpers.ts";
import { parseFlags } from "../config/flags.ts";
import { readHcloudConfig } from "../providers/hcloud/mod.ts";

const REPO = new URL("..", import.meta.url).pathname;

/** Its URL choice: the `-networks` asset with private networking, the plain one without. */
function assetFor(privateNetwork: boolean): string {
  const url = "https://example.invalid/releases/download/v0.1.0/ccm-networks.yaml";
  return (privateNetwork ? url : url.replaceAll("-networks", "")).split("/").pop()!;
}

/** Its cluster CIDR rewrite. */
function patchClusterCidr(manifest: string, cidr: string): string {
  return manifest.replace(/--cluster-cidr=[^"]+/g, `--cluster-cidr=${cidr}`);
}

/** Its Robot step: `- name: ROBOT_ENABLED` / `value: "true"` after the `ROBOT_USER` item, at its indent. */
function patchRobotEnabled(manifest: string): string {
  if (manifest.includes("name: ROBOT_ENABLED")) return manifest;
  const lines = manifest.split(/(?<=\n)/);
  const at = lines.findIndex((l) => /^[ \t]*-[ \t]+name:[ \t]+ROBOT_USER[ \t]*$/.test(l.replace(/\n$/, "")));
  if (at < 0) throw new Error("hetzner-k3s exits 1: the manifest has no `- name: ROBOT_USER` env item");
  const indent = lines[at].match(/^[ \t]*/)![0];
  let end = at + 1;
  while (
    end < lines.length && (!lines[end].trim() || lines[end].match(/^[ \t]*/)![0].length > indent.length)
  ) end++;
  lines.splice(end, 0, `${indent}- name: ROBOT_ENABLED\n`, `${indent}  value: "true"\n`);
  return lines.join("");
}

Deno.test({
  name: "hetzner-k3s: its download, cluster CIDR rewrite and Robot insertion work on our assets",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const cluster = await TestCluster.start();
    const kcm = await KubeControllerManager.start(
      cluster,
      "10.244.0.0/16",
      "deployment-controller,replicaset-controller",
    );
    const readDeployment = async () =>
      JSON.parse(
        await cluster.kubectl([
          "-n",
          "kube-system",
          "get",
          "deployment",
          "hcloud-cloud-controller-manager",
          "-o",
          "json",
        ]),
      );
    try {
      for (const privateNetwork of [true, false]) {
        await t.step(`private network ${privateNetwork ? "on" : "off"}, Robot node pools`, async () => {
          // hetzner-k3s' Secret (templates/hetzner_cloud_secret_manifest.yaml, secret.cr): the network's name,
          // empty without private networking; the Robot credentials with Robot node pools.
          const secret = {
            token: "t".repeat(64),
            network: privateNetwork ? "k3s" : "",
            "robot-user": "robot-u",
            "robot-password": "robot-p",
          };
          await cluster.kubectl(["-n", "kube-system", "delete", "secret", "hcloud", "--ignore-not-found"]);
          await cluster.createSecret("kube-system", "hcloud", secret);
          const asset = assetFor(privateNetwork);
          assertEquals(asset, privateNetwork ? "ccm-networks.yaml" : "ccm.yaml");
          const manifest = patchRobotEnabled(
            patchClusterCidr(await Deno.readTextFile(`${REPO}deploy/${asset}`), "10.50.0.0/16"),
          );
          await cluster.kubectl(["apply", "-f", "-"], manifest);
          const deployment = await readDeployment();
          const c = deployment.spec.template.spec.containers[0];
          const { flags, errors } = parseFlags(c.args);
          assertEquals(errors, [], "the CCM accepts the arguments");
          assertEquals(
            flags.clusterCidr,
            "10.50.0.0/16",
            "its cluster CIDR takes effect",
          );
          // The environment as the kubelet resolves it from the Secret, read by the CCM's own configuration.
          const env: Record<string, string | undefined> = {};
          for (const e of c.env) {
            const ref = e.valueFrom?.secretKeyRef;
            if (ref) {
              assertEquals(ref.name, "hcloud", `${e.name} comes from hetzner-k3s' Secret`);
              env[e.name] = secret[ref.key as keyof typeof secret];
            } else env[e.name] = e.value;
          }
          assertEquals(env.ROBOT_ENABLED, "true");
          const dir = await Deno.makeTempDir();
          try {
            const { config } = await readHcloudConfig(env, dir);
            assertEquals([config.robot.user, config.network], [
              "robot-u",
              privateNetwork ? "k3s" : undefined,
            ]);
          } finally {
            await Deno.remove(dir, { recursive: true });
          }
          await eventually(async () => {
            const d = await readDeployment();
            return d.status?.observedGeneration === d.metadata.generation && (d.status?.replicas ?? 0) > 0;
          }, 30_000);
        });
      }
      await t.step("a manifest without the ROBOT_USER item stops it, as there", () => {
        let refused = "";
        try {
          patchRobotEnabled("env:\n  - name: HCLOUD_TOKEN\n");
        } catch (err) {
          refused = (err as Error).message;
        }
        assert(refused.includes("ROBOT_USER"), refused);
      });
    } finally {
      await kcm.stop();
      await cluster.stop();
    }
  },
});
