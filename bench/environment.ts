/**
 * The benchmark's environment: a fresh cluster, the simulator (with `servers` attached to network
 * k8s) and the CCM as its own process, with its peak RSS sampled every second.
 *
 * @module
 */
import { TestCluster } from "../testing/kube_cluster.ts";
import { adminClient } from "../testing/ccm_harness.ts";
import { spawnCcm } from "../testing/ccm_process.ts";
import { DEFAULT_SIM_TOKEN, Simulator } from "../hcloud_sim/simulator.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { TARGET_LABEL } from "../providers/hcloud/mod.ts";
import { NAMESPACES } from "../kube/resources.ts";
import { waitFor } from "./bench_util.ts";

/** Starts everything and waits until the CCM is ready; `close()` stops it and returns the 429s sent. */
export async function benchEnvironment(
  servers: number,
  options: {
    latencyMs: number;
    actionMs: number;
    denoArgs?: string[];
    /** The module the CCM runs (default `main.ts`). */
    entry?: string;
    env?: Record<string, string>;
    /** More CCM flags. */
    args?: string[];
    /**
     * Servers already carry this cluster's load-balancer target label, as in a cluster that has run
     * for a while: labelling 5000 servers (one request each) alone outlasts the hourly API budget.
     */
    prelabelled?: boolean;
    /** Dedicated servers `bm-<i>` in the simulator's Robot, with Robot enabled in the CCM. */
    robotServers?: number;
    /** Servers network k8s holds (default: `servers`, at least Hetzner's 100). */
    networkServers?: number;
  },
) {
  const cluster = await TestCluster.start();
  const sim = new Simulator({
    actionDurationMs: options.actionMs,
    latencyMs: options.latencyMs,
    quiet: true,
    // Hetzner's networks hold 100 servers; these clusters are larger. The figures measure the CCM's
    // side (server lists, balancers), which is the same with the Nodes spread over public addresses.
    networkLimits: { servers: Math.max(100, options.networkServers ?? servers) },
  }).start();
  applySeed(sim, {
    networks: [{
      name: "k8s",
      ip_range: "10.0.0.0/8",
      subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
    }],
    servers: Array.from(
      { length: servers },
      (_, i) => ({
        name: `node-${i}`,
        server_type: "cpx21",
        location: "fsn1",
        private_net: [{ network: "k8s" }],
      }),
    ),
  });
  for (let i = 0; i < (options.robotServers ?? 0); i++) sim.robot.add({ server_name: `bm-${i}` });
  const robotEnv: Record<string, string> = options.robotServers
    ? {
      ROBOT_ENABLED: "true",
      ROBOT_USER: "robot-user",
      ROBOT_PASSWORD: "robot-password",
      ROBOT_ENDPOINT: sim.robotEndpoint,
    }
    : {};
  if (options.prelabelled) {
    const admin = await adminClient(cluster);
    const uid = (await admin.get(NAMESPACES, "kube-system")).metadata!.uid!;
    admin.transport.close();
    for (const server of sim.world.servers.values()) {
      sim.control.setLabels("server", server.id, { ...server.labels, [TARGET_LABEL]: uid });
    }
  }
  const spawn = () =>
    spawnCcm([
      `--kubeconfig=${cluster.kubeconfigPath}`,
      "--leader-elect=false",
      "--cluster-cidr=10.244.0.0/16",
      "--log-level=warning",
      ...options.args ?? [],
    ], {
      HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
      HCLOUD_ENDPOINT: sim.endpoint,
      HCLOUD_NETWORK: "k8s",
      HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
      // lb11 reaches 25 servers (label-selector matches beyond are ignored); these clusters are larger.
      HCLOUD_LOAD_BALANCERS_TYPE: "lb31",
      // Hetzner networks hold at most 100 routes; large clusters route pods with their CNI.
      HCLOUD_NETWORK_ROUTES_ENABLED: "false",
      ...robotEnv,
      ...options.env,
    }, { denoArgs: options.denoArgs, entry: options.entry });
  let ccm = spawn();
  const client = await adminClient(cluster);
  let peakRss = 0;
  /** Peak anonymous RSS (heap, stacks) and the file-backed part (the runtime's code) at that time. */
  let peakAnon = 0;
  let fileAtPeak = 0;
  const sampler = setInterval(async () => {
    const text = await ccm.get("/metrics").then((r) => r.text, () => "");
    const rss = Number(text.match(/^process_resident_memory_bytes (\S+)/m)?.[1] ?? 0);
    peakRss = Math.max(peakRss, rss);
    const status = await Deno.readTextFile(`/proc/${ccm.child.pid}/status`).catch(() => "");
    const kb = (field: string) =>
      Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0) * 1024;
    if (kb("RssAnon") > peakAnon) {
      peakAnon = kb("RssAnon");
      fileAtPeak = kb("RssFile");
    }
  }, 1_000);
  const ready = () =>
    waitFor(async () => (await ccm.get("/readyz").catch(() => ({ status: 0 }))).status === 200, 60_000);
  await ready();
  return {
    cluster,
    sim,
    client,
    /** The CCM running now (another one after {@link restart}). */
    get ccm() {
      return ccm;
    },
    /**
     * The CCM killed (a crash, an OOM: `SIGKILL`; a rollout: `SIGTERM`) and started again as it was;
     * resolves once the new one is running, before it is ready. Peak memory is the new process's.
     */
    async restart(signal: "SIGKILL" | "SIGTERM"): Promise<void> {
      ccm.child.kill(signal);
      await ccm.status;
      peakRss = peakAnon = fileAtPeak = 0;
      ccm = spawn();
    },
    /** Resolves once the running CCM answers /readyz. */
    ready,
    /** The OS's peak RSS (VmHWM) of the CCM, or the highest sampled RSS where there is none. */
    peakRssMb: () => Math.round(Math.max(peakRss, ccm.peakRssBytes() ?? 0) / 1e5) / 10,
    /** Peak RssAnon and the RssFile sampled with it, in MB (Linux only; 0 elsewhere). */
    rssPartsMb: () => ({ anon: Math.round(peakAnon / 1e5) / 10, file: Math.round(fileAtPeak / 1e5) / 10 }),
    cpuSeconds: async () =>
      Number((await ccm.get("/metrics")).text.match(/^process_cpu_seconds_total (\S+)/m)?.[1] ?? 0),
    async close(): Promise<number> {
      clearInterval(sampler);
      ccm.child.kill("SIGTERM");
      await ccm.status;
      client.transport.close();
      await sim.stop();
      await cluster.stop();
      return sim.rateLimited;
    },
  };
}
