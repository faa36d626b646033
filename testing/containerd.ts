/**
 * A container runtime for real kubelets: Debian's containerd (its CRI plugin), started with every
 * path in a folder of the test's, so it touches nothing of the machine's. Its CNI configuration is a
 * loopback-only network: enough for the runtime to report its network ready (and the kubelet Ready);
 * the tests run no Pods, so no CNI plugin is ever called.
 *
 * @module
 */
import { copyToFile, pollUntil } from "./helpers.ts";

/** Fails, saying how to get it, when containerd is not installed. */
export async function containerdBinary(): Promise<string> {
  for (const path of [Deno.env.get("TEST_ASSET_CONTAINERD"), "/usr/bin/containerd"]) {
    if (!path) continue;
    try {
      if ((await Deno.stat(path)).isFile) return path;
    } catch { /* next */ }
  }
  throw new Error(
    'containerd not found: "apt-get install containerd" (deno task test does it as root) or set TEST_ASSET_CONTAINERD',
  );
}

/** A running containerd. */
export class Containerd {
  private constructor(readonly child: Deno.ChildProcess, readonly dir: string) {}

  /** The CRI endpoint a kubelet is given. */
  get endpoint(): string {
    return `unix://${this.dir}/containerd.sock`;
  }

  /** Starts containerd with its state in a new folder under `parent` and waits for its socket. */
  static async start(parent: string): Promise<Containerd> {
    const binary = await containerdBinary();
    const dir = await Deno.makeTempDir({ dir: parent, prefix: "containerd-" });
    await Deno.mkdir(`${dir}/net.d`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/net.d/10-loopback.conflist`,
      JSON.stringify({ cniVersion: "1.0.0", name: "test", plugins: [{ type: "loopback" }] }),
    );
    await Deno.writeTextFile(
      `${dir}/config.toml`,
      [
        "version = 2",
        `root = "${dir}/root"`,
        `state = "${dir}/state"`,
        "[grpc]",
        `  address = "${dir}/containerd.sock"`,
        "[ttrpc]",
        `  address = "${dir}/containerd.sock.ttrpc"`,
        '[plugins."io.containerd.grpc.v1.cri".cni]',
        `  bin_dir = "${dir}/cni-bin"`,
        `  conf_dir = "${dir}/net.d"`,
        "",
      ].join("\n"),
    );
    const log = await Deno.open(`${dir}/containerd.log`, { create: true, write: true });
    const child = new Deno.Command(binary, {
      args: ["--config", `${dir}/config.toml`],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    copyToFile(child.stderr, log);
    const runtime = new Containerd(child, dir);
    const socket = async () => (await Deno.stat(`${dir}/containerd.sock`)).isSocket === true;
    if (await pollUntil(socket, { timeoutMs: 30_000, intervalMs: 100, ignoreErrors: true })) return runtime;
    await runtime.stop();
    const tail = (await Deno.readTextFile(`${dir}/containerd.log`).catch(() => "")).split("\n").slice(-10);
    throw new Error(`containerd did not open its socket within 30 s:\n${tail.join("\n")}`);
  }

  /** Stops it. */
  async stop(): Promise<void> {
    try {
      this.child.kill("SIGTERM");
    } catch { /* gone */ }
    await this.child.status;
  }
}
