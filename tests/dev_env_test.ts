/**
 * Terraform cannot run here, so dev-env.tf is parsed with HashiCorp's HCL parser (npm) and its
 * resources and k3s flags are checked; skaffold.yaml is checked to build the Containerfile and
 * deploy deploy/.
 */
import { parse } from "@cdktf/hcl2json";
import { parse as parseYaml } from "yaml";
import { assert, assertEquals } from "./assert.ts";

const REPO = new URL("..", import.meta.url).pathname;

Deno.test("dev-env.tf: SSH key, network and subnet, control plane and workers, k3s flags, Cilium, the CCM Secret", async () => {
  // deno-lint-ignore no-explicit-any
  const tf: any = await parse("dev-env.tf", await Deno.readTextFile(`${REPO}dev-env.tf`));
  const r = tf.resource;
  assert(r.tls_private_key?.ssh, "a generated SSH key");
  assert(r.hcloud_ssh_key?.dev, "an hcloud SSH key");
  assertEquals(r.hcloud_network.cluster[0].ip_range, "10.0.0.0/8");
  assertEquals([r.hcloud_network_subnet.nodes[0].ip_range, r.hcloud_network_subnet.nodes[0].type], [
    "10.0.0.0/24",
    "cloud",
  ]);
  assert(r.hcloud_server.control[0].network, "the control plane is attached to the network");
  assertEquals(r.hcloud_server.worker[0].count, "${var.worker_count}");
  assert(r.hcloud_server.worker[0].network, "workers are attached to the network");
  assertEquals(tf.variable.worker_count[0].type, "${number}");
  const serverArgs = tf.locals[0].k3s_server_args as string;
  for (
    const flag of [
      "--disable-cloud-controller",
      "--kubelet-arg cloud-provider=external",
      "--flannel-backend=none",
      "--disable=servicelb,traefik,local-storage",
      "--cluster-cidr ${local.cluster_cidr}",
      "--node-ip ${local.control_ip}",
    ]
  ) assert(serverArgs.includes(flag), `k3s server flag ${flag}`);
  assertEquals(tf.locals[0].cluster_cidr, "10.244.0.0/16");
  const install = r.null_resource.k3s_control[0].provisioner["local-exec"][0].command as string;
  assert(install.startsWith("k3sup install") && install.includes("${local.k3s_server_args}"));
  const join = r.null_resource.k3s_worker[0].provisioner["local-exec"][0].command as string;
  assert(
    join.startsWith("k3sup join") && join.includes("--kubelet-arg cloud-provider=external") &&
      join.includes("--node-ip"),
  );
  assertEquals([r.helm_release.cilium[0].chart, r.helm_release.cilium[0].repository], [
    "cilium",
    "https://helm.cilium.io",
  ]);
  const secret = r.kubernetes_secret_v1.hcloud[0];
  assertEquals([secret.metadata[0].name, secret.metadata[0].namespace], ["hcloud", "kube-system"]);
  assertEquals(Object.keys(secret.data).sort(), ["network", "token"]);
  assert(tf.output.kubeconfig, "outputs the kubeconfig path");
});

Deno.test("skaffold.yaml builds deploy/Containerfile and deploys deploy/ with kustomize", async () => {
  const sk = parseYaml(await Deno.readTextFile(`${REPO}skaffold.yaml`));
  assertEquals(sk.build.artifacts[0].docker.dockerfile, "deploy/Containerfile");
  assertEquals(sk.manifests.kustomize.paths, ["deploy"]);
  const image = sk.build.artifacts[0].image;
  assert(
    (await Deno.readTextFile(`${REPO}deploy/deployment.yaml`)).includes(`image: ${image}`),
    "the Deployment uses the built image",
  );
});
