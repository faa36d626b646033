/**
 * A real kubelet (built from the Kubernetes module like the apiserver), started as clusters with an
 * external CCM start it: `--cloud-provider=external`, optionally `--node-ip`. It runs in a network
 * namespace of its own (so `--node-ip` can be an address of "its" machine, as the kubelet checks),
 * entered with `nsenter` only, so it sees the machine's cgroups; its container runtime is
 * {@link Containerd}. It registers its Node, renews its Lease and posts its status as a kubelet does
 * (faster than the defaults, so a test sees many status updates in a minute).
 *
 * What it does to the machine and how a test gets it back: it bind-mounts its root folder (unmounted
 * on stop) and sets a few kernel tunables (`vm.overcommit_memory`, `kernel.panic`, ...; restored when
 * the last kubelet stops). It runs no Pods: no scheduler runs.
 *
 * @module
 */
import type { TestCluster } from "./kube_cluster.ts";
import type { Containerd } from "./containerd.ts";
import { NodeNamespace, sh } from "./node_namespace.ts";
import { copyToFile } from "./helpers.ts";

/** The kernel tunables a kubelet sets at start (`setupKernelTunables`). */
const TUNABLES = [
  "vm/overcommit_memory",
  "vm/panic_on_oom",
  "kernel/panic",
  "kernel/panic_on_oops",
  "kernel/keys/root_maxkeys",
  "kernel/keys/root_maxbytes",
];
let running = 0;
let saved = new Map<string, string>();

async function saveTunables(): Promise<void> {
  if (running++ > 0) return;
  saved = new Map();
  for (const t of TUNABLES) {
    const value = await Deno.readTextFile(`/proc/sys/${t}`).catch(() => undefined);
    if (value !== undefined) saved.set(t, value);
  }
}

async function restoreTunables(): Promise<void> {
  if (--running > 0) return;
  for (const [t, value] of saved) {
    if (await Deno.readTextFile(`/proc/sys/${t}`).catch(() => value) === value) continue;
    await Deno.writeTextFile(`/proc/sys/${t}`, value).catch(() => {});
  }
}

/** Fails, saying how to get it, when a real kubelet cannot run here. */
export function kubeletBinary(cluster: TestCluster): string {
  const missing: string[] = [];
  if (!cluster.assets.kubelet) {
    missing.push('kubelet not built: run "bash hack/kube_assets/build.sh" (deno task test runs it)');
  }
  if (Deno.uid() !== 0) missing.push("root is needed for the kubelet (cgroups, mounts, a network namespace)");
  if (missing.length) throw new Error(`real kubelet prerequisites missing:\n  ${missing.join("\n  ")}`);
  return cluster.assets.kubelet!;
}

/** How a kubelet is started. */
export interface KubeletOptions {
  /** Its Node's name (`--hostname-override`). */
  name: string;
  /** 1-250: its namespace is `10.201.<index>.0/24`. */
  index: number;
  /** `--node-ip`; the address is added to the namespace so the kubelet accepts it. */
  nodeIp?: string;
  /** How often it checks and posts its status (default 1 s; a status report at least every 10 s). */
  statusSeconds?: number;
}

/** A running kubelet. */
export class Kubelet {
  #ns?: NodeNamespace;
  #child?: Deno.ChildProcess;
  #tunables = false;

  private constructor(readonly options: KubeletOptions, readonly dir: string) {}

  /** Its log file. */
  get logPath(): string {
    return `${this.dir}/kubelet.log`;
  }

  /** Starts a kubelet for Node `options.name` against `cluster` with `runtime`. */
  static async start(cluster: TestCluster, runtime: Containerd, options: KubeletOptions): Promise<Kubelet> {
    const binary = kubeletBinary(cluster);
    const dir = await Deno.makeTempDir({ dir: cluster.dir, prefix: `kubelet-${options.name}-` });
    const kubelet = new Kubelet(options, dir);
    try {
      await kubelet.#start(cluster, runtime, binary);
      return kubelet;
    } catch (err) {
      await kubelet.stop();
      throw err;
    }
  }

  async #start(cluster: TestCluster, runtime: Containerd, binary: string): Promise<void> {
    const { name, index, nodeIp } = this.options;
    const status = this.options.statusSeconds ?? 1;
    this.#ns = await NodeNamespace.create(cluster, "10.201", index, "k", this.dir);
    if (nodeIp) await this.#ns.exec(`ip addr add ${nodeIp}/${nodeIp.includes(":") ? 128 : 32} dev lo`);
    const config = {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      // This machine has cgroup v1 (hybrid), which kubelets of 1.35+ refuse unless told.
      failCgroupV1: false,
      failSwapOn: false,
      cgroupDriver: "cgroupfs",
      // No Pods run: no QoS cgroups, no allocatable enforcement (nothing of the machine's is changed).
      cgroupsPerQOS: false,
      enforceNodeAllocatable: [],
      containerRuntimeEndpoint: runtime.endpoint,
      address: this.#ns.address,
      port: 10250,
      readOnlyPort: 0,
      healthzPort: 0,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: false } },
      authorization: { mode: "AlwaysAllow" },
      nodeStatusUpdateFrequency: `${status}s`,
      nodeStatusReportFrequency: `${status * 10}s`,
      // Its Lease renewed every 2 s (a quarter of its duration): well inside the short grace period
      // the tests give kube-controller-manager (testing/kube_controller_manager.ts), so a live
      // kubelet is never marked Unknown.
      nodeLeaseDurationSeconds: 8,
      // A nearly full disk must not turn into pressure conditions and taints mid-test.
      evictionHard: { "memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
      podLogsDir: `${this.dir}/pod-logs`,
    };
    await Deno.writeTextFile(`${this.dir}/config.yaml`, JSON.stringify(config));
    await saveTunables();
    this.#tunables = true;
    const log = await Deno.open(this.logPath, { create: true, write: true });
    // The device plugin manager binds a fixed path (/var/lib/kubelet/device-plugins/kubelet.sock),
    // whatever --root-dir says: two kubelets of one machine raced for it (CI: the second one failed
    // with "address already in use" and never registered). Each gets its own directory there, in a
    // mount namespace of its own.
    await Deno.mkdir("/var/lib/kubelet/device-plugins", { recursive: true });
    await Deno.mkdir(`${this.dir}/device-plugins`, { recursive: true });
    const [cmd, ...args] = this.#ns.wrap([
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      `mount --bind ${this.dir}/device-plugins /var/lib/kubelet/device-plugins && exec "$@"`,
      "kubelet",
      binary,
      `--kubeconfig=${this.#ns.kubeconfigPath}`,
      `--config=${this.dir}/config.yaml`,
      `--root-dir=${this.dir}/root`,
      `--cert-dir=${this.dir}/pki`,
      `--volume-plugin-dir=${this.dir}/volume-plugins`,
      "--cloud-provider=external",
      `--hostname-override=${name}`,
      ...(nodeIp ? [`--node-ip=${nodeIp}`] : []),
      "--v=2",
    ], false);
    this.#child = new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).spawn();
    copyToFile(this.#child.stderr, log);
  }

  /** The end of its log, for a failure message. */
  async logTail(lines = 20): Promise<string> {
    const text = await Deno.readTextFile(this.logPath).catch(() => "");
    return text.split("\n").slice(-lines).join("\n");
  }

  /** Stops the kubelet (its Node stays); the machine gets back its mounts and tunables. */
  async stop(): Promise<void> {
    if (this.#child) {
      try {
        this.#child.kill("SIGTERM");
      } catch { /* gone */ }
      await this.#child.status;
      this.#child = undefined;
    }
    await sh(`if mountpoint -q ${this.dir}/root; then umount -R ${this.dir}/root; fi`, true);
    await this.#ns?.remove();
    this.#ns = undefined;
    if (this.#tunables) {
      this.#tunables = false;
      await restoreTunables();
    }
  }
}
