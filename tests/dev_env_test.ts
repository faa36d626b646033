/**
 * dev-env.tf is parsed with HashiCorp's HCL parser (npm) and its resources, k3s flags and one-apply
 * structure are checked; skaffold.yaml is checked to build the Containerfile and deploy deploy/.
 * Its Hetzner resources are applied for real by terraform and the hcloud provider v1.68.0 (served by
 * the Go module proxy at that exact version) against the simulator in dev_env_apply_test.ts.
 */
import { parse } from "@cdktf/hcl2json";
import { parse as parseYaml } from "yaml";
import { assert, assertEquals, assertMatch } from "../testing/assert.ts";
import { SERVER_TYPES } from "../hcloud_sim/catalog.ts";

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
  // One apply: nothing reads the kubeconfig at plan time (no helm/kubernetes providers); the add-ons
  // run after k3sup wrote it.
  assertEquals(Object.keys(tf.terraform[0].required_providers[0]).sort(), ["hcloud", "local", "null", "tls"]);
  assertEquals(tf.provider.helm, undefined);
  assertEquals(tf.provider.kubernetes, undefined);
  const addons = r.null_resource.cluster_addons[0];
  assertEquals(addons.depends_on, ["${null_resource.k3s_control}"]);
  const exec = addons.provisioner["local-exec"][0];
  assertEquals(exec.environment.KUBECONFIG, "${local.kubeconfig_path}");
  const command = exec.command as string;
  assert(
    command.includes(
      "helm upgrade --install cilium cilium --repo https://helm.cilium.io --version ${var.cilium_version}",
    ),
  );
  assert(command.includes("create secret generic hcloud") && command.includes('token=\\"$HCLOUD_TOKEN\\"'));
  assert(!command.includes("var.hcloud_token"), "the token is not on the command line");
  assertMatch(tf.variable.cilium_version[0].default, /^\d+\.\d+\.\d+$/);
  // A current server type (the simulator's catalog marks the deprecated ones).
  const type = SERVER_TYPES.find((t) => t.name === tf.variable.server_type[0].default);
  assert(type && !type.deprecated, `default server type ${tf.variable.server_type[0].default} is current`);
  assertEquals(tf.provider.hcloud[0].endpoint, "${var.hcloud_endpoint}");
  assertEquals(tf.variable.hcloud_endpoint[0].default, null);
  assert(
    (tf.locals[0].kubeconfig_path as string).startsWith("${abspath(path.module)}"),
    "absolute kubeconfig",
  );
  assert(tf.output.kubeconfig, "outputs the kubeconfig path");
});

Deno.test("skaffold.yaml builds deploy/Containerfile and deploys deploy/ with kustomize", async () => {
  const sk = parseYaml(await Deno.readTextFile(`${REPO}skaffold.yaml`));
  assertEquals(sk.build.artifacts[0].docker.dockerfile, "deploy/Containerfile");
  assertEquals(sk.manifests.kustomize.paths, ["deploy"]);
  const image = sk.build.artifacts[0].image;
  assert(
    (await Deno.readTextFile(`${REPO}deploy/ccm.yaml`)).includes(`image: "${image}:`),
    "the Deployment uses the built image",
  );
});
