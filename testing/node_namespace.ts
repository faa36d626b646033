/**
 * A Node's own network: a network namespace (root needed), joined to this machine by a veth pair
 * (`<net>.<n>.1` here, `<net>.<n>.2` inside), with a relay on the host end that passes connections to
 * the test apiserver (it listens on loopback only; TLS stays end to end, the kubeconfig written for
 * the namespace names the certificate's host). The real kube-proxy and the real kubelet run in one.
 *
 * The addresses are fixed, so the machine's namespaces are one test run's at a time: a run holds
 * {@link LOCK_PATH} while it has any, and the run that takes it removes what a killed run left (a
 * leftover `10.200.1.1` on the host takes the route to the next run's Node: stop 55's CI failed so).
 *
 * @module
 */
import type { TestCluster } from "./kube_cluster.ts";

/** Runs `command` in bash; throws with its stderr unless `allowFailure`. */
export async function sh(command: string, allowFailure = false): Promise<void> {
  const out = await new Deno.Command("bash", { args: ["-c", command], stdout: "null", stderr: "piped" })
    .output();
  if (!out.success && !allowFailure) {
    throw new Error(`${command}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
}

/** The machine-wide lock of the test namespaces (flock: the kernel drops it when its holder dies). */
export const LOCK_PATH = "/run/deno-ccm-test-namespaces.lock";
/** A namespace of ours is `deno-ccm-<tag><index>-<pid>`; its host veth end `dc<tag><index>p<pid%10000>h`. */
const OURS = /^deno-ccm-[a-z]+\d+-(\d+)$/;
const OUR_VETH = /^dc[a-z]+\d+p(\d+)h$/;

let claim: { file: Promise<Deno.FsFile>; users: number } | undefined;

/**
 * Takes the machine's test namespaces for this run (counted: every {@link claimNamespaces} is
 * matched by one {@link releaseNamespaces}); while another live run holds them, waits, saying so once.
 * Once taken, every namespace and host veth of ours that another process left is removed: its owner
 * is dead or it would hold the lock.
 */
export async function claimNamespaces(): Promise<void> {
  if (claim) {
    claim.users++;
    await claim.file;
    return;
  }
  const file = (async () => {
    const f = await Deno.open(LOCK_PATH, { create: true, read: true, write: true });
    if (!await f.tryLock(true)) {
      console.error(`waiting for another test run's network namespaces (${LOCK_PATH} is locked)`);
      await f.lock(true);
    }
    await removeLeftovers();
    return f;
  })();
  claim = { file, users: 1 };
  try {
    await file;
  } catch (err) {
    claim = undefined;
    throw err;
  }
}

/** Gives back one {@link claimNamespaces}; the last one unlocks. */
export async function releaseNamespaces(): Promise<void> {
  if (!claim || --claim.users > 0) return;
  const file = await claim.file;
  claim = undefined;
  file.close();
}

/** Removes the namespaces and host veth ends of ours that another process made. */
async function removeLeftovers(): Promise<void> {
  const list = (args: string[]) =>
    new Deno.Command("ip", { args, stdout: "piped", stderr: "null" }).output().then((o) =>
      new TextDecoder().decode(o.stdout).split("\n").map((l) => l.split(/[\s@]/)[0]).filter(Boolean)
    );
  const mine = (m: RegExpMatchArray | null, pid: number) => m && Number(m[1]) === pid;
  for (const name of await list(["netns", "list"])) {
    const m = name.match(OURS);
    if (m && !mine(m, Deno.pid)) await sh(`ip netns del ${name}`, true);
  }
  for (const name of await list(["-br", "link"])) {
    const m = name.match(OUR_VETH);
    if (m && !mine(m, Deno.pid % 10000)) await sh(`ip link del ${name}`, true);
  }
}

/** One namespace with its veth and apiserver relay. */
export class NodeNamespace {
  readonly name: string;
  readonly #veth: string;
  #relay?: Deno.TcpListener;
  #removed = false;

  private constructor(
    readonly net: string,
    readonly index: number,
    readonly tag: string,
    /** The kubeconfig for programs in the namespace (its server is the relay). */
    readonly kubeconfigPath: string,
  ) {
    this.name = `deno-ccm-${tag}${index}-${Deno.pid}`;
    this.#veth = `dc${tag}${index}p${Deno.pid % 10000}`;
  }

  /** The address inside the namespace (`<net>.<index>.2`). */
  get address(): string {
    return `${this.net}.${this.index}.2`;
  }

  /** The host end's address (`<net>.<index>.1`). */
  get hostAddress(): string {
    return `${this.net}.${this.index}.1`;
  }

  /**
   * Makes namespace `index` (1-250) on `net` (two octets, e.g. `10.200`); `tag` (one or two letters)
   * keeps the names of different kinds of namespaces apart. Writes `<dir>/kubeconfig` for it.
   */
  static async create(
    cluster: TestCluster,
    net: string,
    index: number,
    tag: string,
    dir: string,
  ): Promise<NodeNamespace> {
    if (Deno.uid() !== 0) throw new Error("root is needed for network namespaces");
    const ns = new NodeNamespace(net, index, tag, `${dir}/kubeconfig`);
    await claimNamespaces();
    try {
      await ns.#create(cluster);
      return ns;
    } catch (err) {
      await ns.remove();
      throw err;
    }
  }

  async #create(cluster: TestCluster): Promise<void> {
    const [ns, host, inner] = [this.name, `${this.#veth}h`, `${this.#veth}n`];
    await sh(
      `ip netns add ${ns} && ip link add ${host} type veth peer name ${inner} && ip link set ${inner} netns ${ns}`,
    );
    await sh(`ip addr add ${this.hostAddress}/24 dev ${host} && ip link set ${host} up`);
    await this.exec(
      `ip addr add ${this.address}/24 dev ${inner} && ip link set ${inner} up && ` +
        `ip link set lo up && ip route add default via ${this.hostAddress} && sysctl -qw net.ipv4.ip_forward=1`,
    );
    this.#relay = Deno.listen({ hostname: this.hostAddress, port: cluster.apiserverPort });
    (async () => {
      for await (const conn of this.#relay!) {
        Deno.connect({ hostname: "127.0.0.1", port: cluster.apiserverPort }).then((up) =>
          Promise.allSettled([conn.readable.pipeTo(up.writable), up.readable.pipeTo(conn.writable)])
        ).catch(() => conn.close());
      }
    })().catch(() => {});
    const config = JSON.parse(await Deno.readTextFile(cluster.kubeconfigPath));
    for (const c of config.clusters) {
      c.cluster.server = `https://${this.hostAddress}:${cluster.apiserverPort}`;
      c.cluster["tls-server-name"] = "localhost";
    }
    await Deno.writeTextFile(this.kubeconfigPath, JSON.stringify(config));
  }

  /** Runs a shell command inside the namespace. */
  exec(command: string, allowFailure = false): Promise<void> {
    return sh(`ip netns exec ${this.name} sh -c '${command}'`, allowFailure);
  }

  /**
   * The command line that runs `args` inside the namespace. `ownMounts`: in a mount namespace of its
   * own too (`ip netns exec`, which also remounts /sys); else only the network is entered (`nsenter`),
   * for a program that must see the machine's cgroup mounts, as a kubelet must.
   */
  wrap(args: string[], ownMounts = true): string[] {
    return ownMounts
      ? ["ip", "netns", "exec", this.name, ...args]
      : ["nsenter", `--net=/var/run/netns/${this.name}`, "--", ...args];
  }

  /** Closes the relay and removes the namespace and the veth. */
  async remove(): Promise<void> {
    try {
      this.#relay?.close();
    } catch { /* closed */ }
    await sh(`ip netns del ${this.name}`, true);
    await sh(`ip link del ${this.#veth}h`, true);
    if (!this.#removed) {
      this.#removed = true;
      await releaseNamespaces();
    }
  }
}
