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

/** The address a Node's endpoints answer on. */
export function kubeProxyNodeAddress(index: number): string {
  return `10.200.${index}.2`;
}

async function sh(command: string, allowFailure = false): Promise<void> {
  const out = await new Deno.Command("bash", { args: ["-c", command], stdout: "null", stderr: "piped" })
    .output();
  if (!out.success && !allowFailure) {
    throw new Error(`${command}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
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
  readonly #ns: string;
  readonly #veth: string;
  #relay?: Deno.TcpListener;
  #proxy?: Deno.ChildProcess;

  private constructor(readonly index: number, readonly nodeName: string, readonly dir: string) {
    this.#ns = `deno-ccm-n${index}-${Deno.pid}`;
    this.#veth = `dcv${index}p${Deno.pid % 10000}`;
  }

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
    const [ns, host, inner] = [this.#ns, `${this.#veth}h`, `${this.#veth}n`];
    const hostIp = `10.200.${this.index}.1`;
    await sh(
      `ip netns add ${ns} && ip link add ${host} type veth peer name ${inner} && ip link set ${inner} netns ${ns}`,
    );
    await sh(`ip addr add ${hostIp}/24 dev ${host} && ip link set ${host} up`);
    await sh(
      `ip netns exec ${ns} sh -c 'ip addr add ${this.address}/24 dev ${inner} && ip link set ${inner} up && ` +
        `ip link set lo up && ip route add default via ${hostIp} && sysctl -qw net.ipv4.ip_forward=1'`,
    );
    // The apiserver, reached from the namespace through the host end of the veth.
    this.#relay = Deno.listen({ hostname: hostIp, port: cluster.apiserverPort });
    (async () => {
      for await (const conn of this.#relay!) {
        Deno.connect({ hostname: "127.0.0.1", port: cluster.apiserverPort }).then((up) =>
          Promise.allSettled([conn.readable.pipeTo(up.writable), up.readable.pipeTo(conn.writable)])
        ).catch(() => conn.close());
      }
    })().catch(() => {});
    const config = JSON.parse(await Deno.readTextFile(cluster.kubeconfigPath));
    for (const c of config.clusters) {
      c.cluster.server = `https://${hostIp}:${cluster.apiserverPort}`;
      c.cluster["tls-server-name"] = "localhost";
    }
    await Deno.writeTextFile(`${this.dir}/kubeconfig`, JSON.stringify(config));
    const log = await Deno.open(`${this.dir}/kube-proxy.log`, { create: true, write: true });
    this.#proxy = new Deno.Command("ip", {
      args: [
        "netns",
        "exec",
        ns,
        binary,
        `--kubeconfig=${this.dir}/kubeconfig`,
        `--hostname-override=${this.nodeName}`,
        "--proxy-mode=nftables",
        "--healthz-bind-address=0.0.0.0:10256",
        "--metrics-bind-address=127.0.0.1:10249",
        // NodePorts on the Node's namespace address (the Node object carries the cloud's addresses).
        `--nodeport-addresses=10.200.${this.index}.0/24`,
        "--conntrack-max-per-core=0",
        "--v=1",
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    this.#proxy.stderr.pipeTo(log.writable).catch(() => {});
  }

  /** Starts `args` inside the Node's namespace (a "Pod" of the Node); the caller stops it. */
  spawnInside(args: string[]): Deno.ChildProcess {
    return new Deno.Command("ip", {
      args: ["netns", "exec", this.#ns, ...args],
      stdout: "null",
      stderr: "null",
    })
      .spawn();
  }

  /** Stops kube-proxy and removes the namespace, the veth and kube-proxy's tables with them. */
  async stop(): Promise<void> {
    try {
      this.#proxy?.kill("SIGTERM");
      await this.#proxy?.status;
    } catch { /* already gone */ }
    try {
      this.#relay?.close();
    } catch { /* closed */ }
    await sh(`ip netns del ${this.#ns}`, true);
    await sh(`ip link del ${this.#veth}h`, true);
  }
}
