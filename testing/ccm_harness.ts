/**
 * Runs the CCM in-process against a test cluster and the simulator, with flags and `HCLOUD_*`
 * environment as an operator would give them.
 *
 * @module
 */
import type { Node, NodeCondition } from "kubernetes-types/core/v1.d.ts";
import { runApp } from "../app.ts";
import { parseFlags } from "../config/flags.ts";
import { resolveControllers } from "../config/controllers_flag.ts";
import { CONTROLLER_FACTORIES } from "../controllers/mod.ts";
import { PROVIDED_NODE_IP, UNINITIALIZED_TAINT } from "../kube/well_known.ts";
import { createProvider } from "../providers/registry.ts";
import { DEFAULT_SIM_TOKEN, type Simulator, type SimulatorOptions } from "../hcloud_sim/simulator.ts";
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

/**
 * Starts a {@link TestEnvironment} (logs quieted): the one set-up of the tests that run the CCM against
 * an apiserver and the simulator (`sim`: the simulator's options).
 */
export async function testEnvironment(sim: SimulatorOptions = {}): Promise<TestEnvironment> {
  quietLogs();
  const cluster = await TestCluster.start();
  const s = await startTestSim(sim);
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

/** The architecture label value a kubelet on this machine writes (Go's `GOARCH`). */
const GOARCH = ({ x86_64: "amd64", aarch64: "arm64" } as Record<string, string>)[Deno.build.arch] ??
  Deno.build.arch;

/**
 * What a kubelet (v1.33-v1.36, `--cloud-provider=external`) writes into a Node when it registers,
 * as far as the CCM can see it: its name, OS and architecture labels, the attach-detach annotation,
 * the provided-node-ip annotation and an InternalIP address when it has `--node-ip`, a Hostname
 * address, the uninitialized taint, no provider ID, its conditions (not Ready yet).
 * tests/node_imitation_test.ts compares it field by field with what a real kubelet registers, so
 * the two cannot drift apart.
 */
export function kubeletNode(name: string, nodeIp?: string): Node {
  const ips = nodeIp ? nodeIp.split(",") : [];
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "beta.kubernetes.io/arch": GOARCH,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": GOARCH,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
      },
      annotations: {
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        ...(nodeIp ? { [PROVIDED_NODE_IP]: nodeIp } : {}),
      },
    },
    spec: { taints: [{ key: UNINITIALIZED_TAINT, value: "true", effect: "NoSchedule" }] },
    status: {
      addresses: [
        ...ips.map((address) => ({ type: "InternalIP", address })),
        { type: "Hostname", address: name },
      ],
      // A kubelet registers before its runtime and PLEG have answered: not Ready yet.
      conditions: [
        ["MemoryPressure", "False", "KubeletHasSufficientMemory"],
        ["DiskPressure", "False", "KubeletHasNoDiskPressure"],
        ["PIDPressure", "False", "KubeletHasSufficientPID"],
        ["Ready", "False", "KubeletNotReady"],
      ].map(([type, status, reason]) => ({
        type,
        status,
        reason,
        message: "registered by the test harness",
      })),
    },
  };
}

/**
 * Registers a Node the way the kubelet does with `--cloud-provider=external` ({@link kubeletNode}),
 * with the given labels, provider ID, pod CIDRs and status added.
 */
export async function registerNode(
  client: KubeClient,
  name: string,
  options: {
    nodeIp?: string;
    providerID?: string;
    labels?: Record<string, string>;
    podCIDRs?: string[];
    /** More of the status the kubelet reports along with its addresses. */
    status?: Record<string, unknown>;
  } = {},
): Promise<Node> {
  // The kubelet sends its status with the create. A separate status write after it would race the
  // CCM: one landing after the Node's initialization replaced the addresses the CCM had written.
  const node = kubeletNode(name, options.nodeIp);
  const given = (options.status?.conditions ?? []) as NodeCondition[];
  const created = await client.create(NODES, {
    ...node,
    metadata: { ...node.metadata, labels: { ...node.metadata!.labels, ...options.labels } },
    spec: {
      ...node.spec,
      providerID: options.providerID,
      podCIDR: options.podCIDRs?.[0],
      podCIDRs: options.podCIDRs,
    },
    status: {
      ...options.status,
      addresses: node.status!.addresses,
      // The given conditions replace the registration's of the same type.
      conditions: [
        ...node.status!.conditions!.filter((c) => !given.some((g) => g.type === c.type)),
        ...given,
      ],
    },
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
