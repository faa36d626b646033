/**
 * A Node's network side, real: a network namespace of its own (root), joined to this machine by a
 * veth pair (`10.200.<n>.1` here, `10.200.<n>.2` in the Node), with a real kube-proxy (built from the
 * Kubernetes module, nftables mode) running in it against the test apiserver. The simulator's data
 * path reaches the Node at `10.200.<n>.2`: kube-proxy's health server on 10256 (its `/healthz` with
 * KEP-3836: 503 on a Node being deleted or marked by the autoscaler) and the NodePorts it programs.
 * The apiserver listens on loopback only, so a relay on the host end of the veth passes kube-proxy's
 * connections on (TLS stays end to end; the kubeconfig names the certificate's host).
 *
 * @module
 */
import type { TestCluster } from "./kube_cluster.ts";
import { NodeNamespace } from "./node_namespace.ts";
import { copyToFile } from "./helpers.ts";

/** The address a Node's endpoints answer on. */
export function kubeProxyNodeAddress(index: number): string {
  return `10.200.${index}.2`;
}

/** Fails, saying how to get them, when a real kube-proxy cannot run here. */
export async function kubeProxyPrerequisites(cluster: TestCluster): Promise<string> {
  const missing: string[] = [];
  if (!cluster.assets.kubeProxy) {
    missing.push('kube-proxy not built: run "bash hack/kube_assets/build.sh" (deno task test runs it)');
  }
  if (Deno.uid() !== 0) missing.push("root is needed for network namespaces and nftables");
  const nft = await new Deno.Command("bash", { args: ["-c", "command -v nft"], stdout: "null" }).output();
  if (!nft.success) {
    missing.push('nft not found: "apt-get install nftables" (deno task test does it as root)');
  }
  if (missing.length) throw new Error(`real kube-proxy prerequisites missing:\n  ${missing.join("\n  ")}`);
  return cluster.assets.kubeProxy!;
}

/** One Node's namespace, relay and kube-proxy. */
export class KubeProxyNode {
  #ns?: NodeNamespace;
  #proxy?: Deno.ChildProcess;

  private constructor(readonly index: number, readonly nodeName: string, readonly dir: string) {}

  /** The address the Node's endpoints answer on. */
  get address(): string {
    return kubeProxyNodeAddress(this.index);
  }

  /** Sets up Node `index` (1-250) for the Node named `nodeName` and starts kube-proxy there. */
  static async start(cluster: TestCluster, index: number, nodeName: string): Promise<KubeProxyNode> {
    const binary = await kubeProxyPrerequisites(cluster);
    const dir = await Deno.makeTempDir({ dir: cluster.dir, prefix: `kube-proxy-${nodeName}-` });
    const node = new KubeProxyNode(index, nodeName, dir);
    try {
      await node.#start(cluster, binary);
      return node;
    } catch (err) {
      await node.stop();
      throw err;
    }
  }

  async #start(cluster: TestCluster, binary: string): Promise<void> {
    this.#ns = await NodeNamespace.create(cluster, "10.200", this.index, "v", this.dir);
    const log = await Deno.open(`${this.dir}/kube-proxy.log`, { create: true, write: true });
    const [cmd, ...args] = this.#ns.wrap([
      binary,
      `--kubeconfig=${this.#ns.kubeconfigPath}`,
      `--hostname-override=${this.nodeName}`,
      "--proxy-mode=nftables",
      "--healthz-bind-address=0.0.0.0:10256",
      "--metrics-bind-address=127.0.0.1:10249",
      // NodePorts on the Node's namespace address (the Node object carries the cloud's addresses).
      `--nodeport-addresses=10.200.${this.index}.0/24`,
      "--conntrack-max-per-core=0",
      "--v=1",
    ]);
    this.#proxy = new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).spawn();
    copyToFile(this.#proxy.stderr, log);
  }

  /** Starts `args` inside the Node's namespace (a "Pod" of the Node); the caller stops it. */
  spawnInside(args: string[]): Deno.ChildProcess {
    const [cmd, ...rest] = this.#ns!.wrap(args);
    return new Deno.Command(cmd, { args: rest, stdout: "null", stderr: "null" }).spawn();
  }

  /** Stops kube-proxy and removes the namespace, the veth and kube-proxy's tables with them. */
  async stop(): Promise<void> {
    try {
      this.#proxy?.kill("SIGTERM");
      await this.#proxy?.status;
    } catch { /* already gone */ }
    await this.#ns?.remove();
  }
}
