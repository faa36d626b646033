/**
 * Runs the CCM in-process against a test cluster and the simulator, with flags and `HCLOUD_*`
 * environment as an operator would give them.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { runApp } from "../app.ts";
import { parseFlags } from "../config/flags.ts";
import { resolveControllers } from "../config/controllers_flag.ts";
import { CONTROLLER_FACTORIES } from "../controllers/mod.ts";
import { PROVIDED_NODE_IP, UNINITIALIZED_TAINT } from "../kube/well_known.ts";
import { createProvider } from "../providers/registry.ts";
import { DEFAULT_SIM_TOKEN, type Simulator } from "../hcloud_sim/simulator.ts";
import { Registry } from "../lib/metrics.ts";
import { TestCluster } from "./kube_cluster.ts";
import { startTestSim, type TestSim } from "./sim_harness.ts";
import { quietLogs } from "./helpers.ts";
import { KubeClient } from "../kube/client.ts";
import { HttpTransport } from "../kube/transport.ts";
import { NODES } from "../kube/resources.ts";
import type { ClusterConnection } from "../kube/kubeconfig.ts";

/** A CCM running in this process. */
export interface RunningCcm {
  registry: Registry;
  stop(): Promise<number>;
}

/**
 * Starts the CCM with `args` and `env` (HCLOUD_TOKEN/ENDPOINT default to the simulator's), as the
 * cluster admin unless `connection` says who it is.
 */
export async function startCcm(
  cluster: TestCluster,
  sim: Simulator,
  args: string[],
  env: Record<string, string> = {},
  connection?: ClusterConnection,
): Promise<RunningCcm> {
  const { flags, errors } = parseFlags([
    "--leader-elect=false",
    "--secure-port=0",
    "--kube-api-qps=1000",
    "--kube-api-burst=2000",
    ...args,
  ]);
  const controllers = resolveControllers(flags.controllers);
  const registry = new Registry();
  const provider = await createProvider(flags, controllers.enabled, {
    HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
    HCLOUD_ENDPOINT: sim.endpoint,
    HCLOUD_METRICS_ADDRESS: "127.0.0.1:0",
    ...env,
  }, registry);
  const problems = [...errors, ...controllers.errors, ...provider.errors];
  if (problems.length) throw new Error(problems.join("\n"));
  const stop = new AbortController();
  const done = runApp({
    flags,
    enabled: controllers.enabled,
    connection: connection ?? await cluster.adminConnection(),
    provider: provider.provider!,
    factories: CONTROLLER_FACTORIES,
    registry,
  }, stop.signal);
  return {
    registry,
    stop: async () => {
      stop.abort();
      return await done;
    },
  };
}

/** A fresh apiserver, simulator and admin client for one test. */
export interface TestEnvironment {
  cluster: TestCluster;
  /** The simulator with its OpenAPI response check. */
  s: TestSim;
  sim: Simulator;
  client: KubeClient;
  /** Stops the CCM (when given) and everything else, then fails on any response that broke the spec. */
  close(ccm?: RunningCcm): Promise<void>;
}

/** Starts a {@link TestEnvironment} (logs quieted). */
export async function testEnvironment(): Promise<TestEnvironment> {
  quietLogs();
  const cluster = await TestCluster.start();
  const s = await startTestSim();
  const client = await adminClient(cluster);
  return {
    cluster,
    s,
    sim: s.sim,
    client,
    async close(ccm) {
      try {
        await ccm?.stop();
      } finally {
        client.transport.close();
        await cluster.stop();
        await s.finish();
      }
    },
  };
}

/** An admin client for assertions and setup. */
export async function adminClient(cluster: TestCluster): Promise<KubeClient> {
  return new KubeClient(new HttpTransport(await cluster.adminConnection(), { qps: 0 }));
}

/**
 * Registers a Node the way the kubelet does with `--cloud-provider=external`: the uninitialized
 * taint, the provided-node-ip annotation when `nodeIp` is given, a Hostname address, no provider ID
 * unless given.
 */
export async function registerNode(
  client: KubeClient,
  name: string,
  options: {
    nodeIp?: string;
    providerID?: string;
    labels?: Record<string, string>;
    podCIDRs?: string[];
    /** More of the status the kubelet reports along with its Hostname address. */
    status?: Record<string, unknown>;
  } = {},
): Promise<Node> {
  // The kubelet sends its status with the create. A separate status write after it would race the
  // CCM: one landing after the Node's initialization replaced the addresses the CCM had written.
  const status = { ...options.status, addresses: [{ type: "Hostname", address: name }] };
  const created = await client.create(NODES, {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: { "kubernetes.io/hostname": name, ...options.labels },
      annotations: options.nodeIp ? { [PROVIDED_NODE_IP]: options.nodeIp } : {},
    },
    spec: {
      providerID: options.providerID,
      podCIDR: options.podCIDRs?.[0],
      podCIDRs: options.podCIDRs,
      taints: [{ key: UNINITIALIZED_TAINT, value: "true", effect: "NoSchedule" }],
    },
    status,
  });
  if (created.status?.addresses?.length) return created;
  throw new Error(`the apiserver dropped the status of Node ${name} on create`);
}

/** Sets the Node's Ready condition. */
export async function setReady(client: KubeClient, name: string, ready: boolean): Promise<void> {
  const now = new Date().toISOString();
  await client.patch(NODES, name, "strategic", {
    status: {
      conditions: [{
        type: "Ready",
        status: ready ? "True" : "False",
        reason: ready ? "KubeletReady" : "KubeletNotReady",
        message: "set by test",
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      }],
    },
  }, { subresource: "status" });
}
