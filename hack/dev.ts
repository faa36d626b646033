/**
 * `deno task dev`: runs the CCM.
 *
 * - With `--kubeconfig`, `KUBECONFIG` or in-cluster variables, it runs `main.ts` against that
 *   cluster with the given flags and `HCLOUD_*` environment (the real thing).
 * - Otherwise it brings up the embedded defaults: a local kube-apiserver + etcd (testing/kube_cluster.ts),
 *   the Hetzner API simulator with a demo project, Nodes for the demo servers, and the CCM against
 *   both. Ctrl-C stops everything.
 *
 * @module
 */
import { TestCluster } from "../testing/kube_cluster.ts";
import { adminClient, registerNode } from "../testing/ccm_harness.ts";
import { DEFAULT_SIM_TOKEN, Simulator } from "../hcloud_sim/simulator.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { DEMO_SEED } from "../hcloud_sim/main.ts";

const args = Deno.args;
const env = Deno.env.toObject();
const main = new URL("../main.ts", import.meta.url).pathname;
const external = args.some((a) => a.startsWith("--kubeconfig")) || env.KUBECONFIG ||
  env.KUBERNETES_SERVICE_HOST;

async function runCcm(extraArgs: string[], extraEnv: Record<string, string>): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", main, ...extraArgs, ...args],
    env: extraEnv,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const forward = (sig: Deno.Signal) => () => {
    try {
      child.kill(sig);
    } catch { /* gone */ }
  };
  Deno.addSignalListener("SIGINT", forward("SIGINT"));
  Deno.addSignalListener("SIGTERM", forward("SIGTERM"));
  return (await child.status).code;
}

if (external) {
  Deno.exit(await runCcm([], {}));
}

console.error("no kubeconfig given: starting a local kube-apiserver, etcd and the Hetzner API simulator");
// Only what the local cluster runs (etcd, kube-apiserver): cached after the first build.
const assets = await new Deno.Command("bash", {
  args: [new URL("ensure_test_assets.sh", import.meta.url).pathname, "--demo"],
  stdout: "inherit",
  stderr: "inherit",
}).output();
if (!assets.success) Deno.exit(1);
const cluster = await TestCluster.start();
const sim = new Simulator({ actionDurationMs: 1_000, quiet: true }).start();
applySeed(sim, DEMO_SEED);
try {
  const client = await adminClient(cluster);
  for (const [i, server] of [...sim.world.servers.values()].entries()) {
    await registerNode(client, server.name, { podCIDRs: [`10.244.${i}.0/24`] });
  }
  console.error(`kubeconfig: ${cluster.kubeconfigPath}`);
  console.error(`simulator:  HCLOUD_ENDPOINT=${sim.endpoint} (control API ${sim.url}/_sim/state)`);
  const code = await runCcm([`--kubeconfig=${cluster.kubeconfigPath}`, "--cluster-cidr=10.244.0.0/16"], {
    HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
    HCLOUD_ENDPOINT: sim.endpoint,
    HCLOUD_NETWORK: "k8s",
    HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
    HCLOUD_METRICS_ADDRESS: "127.0.0.1:8233",
  });
  Deno.exitCode = code;
} finally {
  await sim.stop();
  await cluster.stop();
}
