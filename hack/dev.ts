/**
 * `deno task dev`: runs the CCM.
 *
 * - By default, always: the embedded local cluster — a kube-apiserver + etcd (testing/kube_cluster.ts),
 *   the Hetzner API simulator with a demo project, Nodes for the demo servers, and the CCM against
 *   both, with the chart's admission policy. An exported `KUBECONFIG`, `HCLOUD_TOKEN`, endpoint or Robot
 *   credential is not used (and said so): the docs' own steps export `KUBECONFIG`, and a token
 *   exported for the hcloud CLI is production. Settings pass (opt-in features can be tried).
 * - With `--real-cluster`: `main.ts` with the given flags against the cluster the kubeconfig names
 *   (`--kubeconfig`, `KUBECONFIG`, in-cluster) and the cloud project of `HCLOUD_TOKEN`, after naming
 *   both. `--kubeconfig` without `--real-cluster` is refused (exit 2), never guessed.
 *
 * Ctrl-C stops everything.
 *
 * @module
 */
import { TestCluster } from "../testing/kube_cluster.ts";
import { adminClient, registerNode } from "../testing/ccm_harness.ts";
import { DEFAULT_SIM_TOKEN, Simulator } from "../hcloud_sim/simulator.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { DEMO_SEED } from "../hcloud_sim/main.ts";
import { resolveConnection } from "../kube/kubeconfig.ts";
import { readSecretFile } from "../lib/secret_file.ts";
import { installAdmissionPolicy, localHints } from "./local_cluster_extras.ts";

const REAL = "--real-cluster";
const args = Deno.args.filter((a) => a !== REAL);
const real = Deno.args.includes(REAL);
const env = Deno.env.toObject();
const main = new URL("../main.ts", import.meta.url).pathname;

/**
 * What names a real cluster or cloud project (where, and with which credentials): set aside for the
 * local cluster. Settings (`HCLOUD_LOAD_BALANCERS_TLS_SECRETS=true`, say) pass, so opt-in features can
 * be tried here.
 */
const REACHES_REAL =
  /^(KUBECONFIG|KUBERNETES_SERVICE_HOST|KUBERNETES_SERVICE_PORT|HCLOUD_TOKEN|HCLOUD_TOKEN_FILE|HCLOUD_ENDPOINT|HCLOUD_NETWORK|ROBOT_USER|ROBOT_USER_NAME|ROBOT_USER_FILE|ROBOT_PASSWORD|ROBOT_PASSWORD_FILE|ROBOT_ENDPOINT)$/;

/** `env`, or for the local cluster only what cannot reach a real cluster or project. */
function childEnv(local: boolean, extra: Record<string, string>): Record<string, string> {
  if (!local) return { ...env, ...extra };
  const kept = Object.entries(env).filter(([k]) => !REACHES_REAL.test(k));
  return { ...Object.fromEntries(kept), ...extra };
}

async function runCcm(
  extraArgs: string[],
  extraEnv: Record<string, string>,
  local: boolean,
): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", main, ...extraArgs, ...args],
    env: childEnv(local, extraEnv),
    clearEnv: true,
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

if (real) {
  console.error(`deno task dev ${REAL}: acting on ${await clusterNamed()} and ${await projectNamed()}`);
  Deno.exit(await runCcm([], {}, false));
}
if (args.some((a) => a === "--kubeconfig" || a.startsWith("--kubeconfig="))) {
  console.error(
    `deno task dev: --kubeconfig names a real cluster; add ${REAL} to run against it (and the cloud project of ` +
      "HCLOUD_TOKEN), or leave both out for the local cluster and simulator",
  );
  Deno.exit(2);
}
const ignored = Object.keys(env).filter((k) => REACHES_REAL.test(k)).sort();
if (ignored.length) {
  console.error(
    `deno task dev: not used here (the local cluster and simulator): ${ignored.join(", ")}; ` +
      `pass ${REAL} to act on the cluster and project they name`,
  );
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
  const policy = await installAdmissionPolicy(cluster);
  console.error(`kubeconfig: ${cluster.kubeconfigPath}`);
  console.error(`admission policy (from deploy/ccm.yaml): ${policy.join(", ")}`);
  for (const line of localHints(cluster, sim.endpoint)) console.error(line);
  console.error(`simulator control API: ${sim.url}/_sim/state`);
  // Robot, when asked for: the simulator's Robot webservice and its credentials.
  const [robotUser, robotPassword] = [...sim.robot.credentials][0].split(":");
  const robot: Record<string, string> = /^(1|true)$/i.test(env.ROBOT_ENABLED ?? "")
    ? { ROBOT_ENDPOINT: sim.robotEndpoint, ROBOT_USER: robotUser, ROBOT_PASSWORD: robotPassword }
    : {};
  const code = await runCcm([`--kubeconfig=${cluster.kubeconfigPath}`, "--cluster-cidr=10.244.0.0/16"], {
    HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
    HCLOUD_ENDPOINT: sim.endpoint,
    HCLOUD_NETWORK: "k8s",
    HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
    HCLOUD_METRICS_ADDRESS: "127.0.0.1:8233",
    ...robot,
  }, true);
  Deno.exitCode = code;
} finally {
  await sim.stop();
  await cluster.stop();
}

/** The cluster the flags and environment name, as `main.ts` will pick it. */
async function clusterNamed(): Promise<string> {
  const value = (flag: string) => {
    const i = args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
    if (i < 0) return undefined;
    return args[i].includes("=") ? args[i].slice(flag.length + 1) : args[i + 1];
  };
  try {
    const conn = await resolveConnection({
      kubeconfig: value("--kubeconfig"),
      context: value("--context"),
      env,
    });
    return `cluster ${conn.server} (${conn.source})`;
  } catch (err) {
    return `no cluster yet (${(err as Error).message})`;
  }
}

/** The cloud project of the token, as far as a token can tell: its endpoint and what it sees. */
async function projectNamed(): Promise<string> {
  const endpoint = env.HCLOUD_ENDPOINT ?? "https://api.hetzner.cloud/v1";
  const from = env.HCLOUD_TOKEN ? "HCLOUD_TOKEN" : env.HCLOUD_TOKEN_FILE ? `HCLOUD_TOKEN_FILE` : undefined;
  if (!from) return `no Hetzner project (HCLOUD_TOKEN is not set) at ${endpoint}`;
  let token = env.HCLOUD_TOKEN ?? "";
  try {
    if (!token) token = (await readSecretFile(env.HCLOUD_TOKEN_FILE!)).trim();
    const res = await fetch(`${endpoint}/servers?per_page=1`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
    const body = await res.json().catch(() => ({}));
    const servers = body?.meta?.pagination?.total_entries;
    return `the Hetzner project of ${from} at ${endpoint}` +
      (res.ok
        ? ` (it has ${servers ?? "?"} servers${env.HCLOUD_NETWORK ? `, network ${env.HCLOUD_NETWORK}` : ""})`
        : ` (answered ${res.status})`);
  } catch (err) {
    return `the Hetzner project of ${from} at ${endpoint} (not reached: ${(err as Error).message})`;
  }
}
