/**
 * A real kube-controller-manager beside the CCM, as clusters run it (`--cloud-provider=external`):
 * its node IPAM allocates each Node's pod CIDR (which our route controller routes) and its node
 * lifecycle marks a Node whose kubelet went silent `Unknown` and taints it unreachable (which our
 * node lifecycle controller acts on). Built from the Kubernetes module like the apiserver; its log
 * goes to the cluster's folder.
 *
 * @module
 */
import type { TestCluster } from "./kube_cluster.ts";
import { copyToFile } from "./helpers.ts";

/** How long a silent kubelet is given: short, so tests see a Node go `Unknown` within seconds. */
export const KCM_GRACE_SECONDS = 10;

/** A running kube-controller-manager. */
export class KubeControllerManager {
  private constructor(readonly child: Deno.ChildProcess, readonly logPath: string) {}

  /**
   * Starts it against `cluster` with node IPAM over `clusterCidr` and node lifecycle (or the
   * `controllers` given, e.g. the Deployment and ReplicaSet controllers).
   */
  static async start(
    cluster: TestCluster,
    clusterCidr: string,
    controllers = "node-ipam-controller,node-lifecycle-controller",
  ): Promise<KubeControllerManager> {
    const binary = cluster.assets.kubeControllerManager;
    if (!binary) {
      throw new Error(
        'kube-controller-manager not built: run "bash hack/kube_assets/build.sh" (deno task test runs it)',
      );
    }
    const logPath = `${cluster.dir}/kube-controller-manager.log`;
    const log = await Deno.open(logPath, { create: true, write: true });
    const child = new Deno.Command(binary, {
      args: [
        `--kubeconfig=${cluster.kubeconfigPath}`,
        "--cloud-provider=external",
        `--controllers=${controllers}`,
        "--allocate-node-cidrs=true",
        `--cluster-cidr=${clusterCidr}`,
        "--node-cidr-mask-size=24",
        "--node-monitor-period=1s",
        `--node-monitor-grace-period=${KCM_GRACE_SECONDS}s`,
        `--node-startup-grace-period=${KCM_GRACE_SECONDS}s`,
        "--leader-elect=false",
        "--secure-port=0",
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    copyToFile(child.stderr, log);
    return new KubeControllerManager(child, logPath);
  }

  /** The end of its log, for a failure message. */
  async logTail(lines = 20): Promise<string> {
    const text = await Deno.readTextFile(this.logPath).catch(() => "");
    return text.split("\n").slice(-lines).join("\n");
  }

  /** Stops it. */
  async stop(): Promise<void> {
    try {
      this.child.kill("SIGTERM");
    } catch { /* gone */ }
    await this.child.status;
  }
}
