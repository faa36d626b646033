/**
 * Every Node of a cluster replaced under load, through a balancer's data path: requests (bounded in
 * rate and time, on this machine only) flow through the simulator's balancer to the Nodes — each a
 * network namespace with a real kube-proxy (testing/kube_proxy.ts) — and on to the backend while
 * each Node in turn is marked by the autoscaler, taken out of the balancer by the CCM, deleted with
 * its server, and replaced by a new one. Counts the requests that fail, with the CCM's graceful
 * draining on or off (tests/drain_proof_test.ts, bench/bench.ts).
 *
 * @module
 */
import { type RequestLoad, startLoad } from "./request_load.ts";
import { TestCluster } from "./kube_cluster.ts";
import { startTestSim } from "./sim_harness.ts";
import { adminClient, registerNode, startCcm } from "./ccm_harness.ts";
import { eventually } from "./helpers.ts";
import { KubeProxyNode } from "./kube_proxy.ts";
import type { ResourceType } from "../kube/resources.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES, SERVICES } from "../kube/resources.ts";

/** What one run measured. */
export interface DrainRun {
  drain: boolean;
  requests: number;
  failed: number;
  nodesReplaced: number;
  seconds: number;
  /** Cloud requests the CCM made while the Nodes were replaced. */
  cloudRequests: number;
}

/** Settings of a run. */
export interface DrainScenarioOptions {
  /** The CCM's graceful draining (`HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS`). */
  drain: boolean;
  nodes?: number;
  /** Requests started per second (each on its own connection). */
  ratePerSecond?: number;
  /** How long the backend takes to answer (requests in flight when a target goes are the ones at risk). */
  answerMs?: number;
}

const SERVICE_PORT = 8080;
/** The backend ("the Pods"): an address of this machine the Nodes route to. */
export const BACKEND = { hostname: "10.201.0.1", port: 9000 };
/** EndpointSlices (the CCM itself never reads them). */
export const ENDPOINT_SLICES: ResourceType<Record<string, unknown>> = {
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
};

/** Runs a shell command (network set-up); throws with its stderr unless `allowFailure`. */
export async function sh(command: string, allowFailure = false): Promise<void> {
  const out = await new Deno.Command("bash", { args: ["-c", command], stdout: "null", stderr: "piped" })
    .output();
  if (!out.success && !allowFailure) throw new Error(`${command}: ${new TextDecoder().decode(out.stderr)}`);
}

/** Runs the scenario once; everything it starts is stopped before it returns. */
export async function runDrainScenario(o: DrainScenarioOptions): Promise<DrainRun> {
  const count = o.nodes ?? 3;
  const cluster = await TestCluster.start();
  const s = await startTestSim();
  const sim = s.sim;
  const addresses = new Map<number, string>();
  // The balancers reach each server's Node in its network namespace (testing/kube_proxy.ts).
  const dataPath = sim.enableDataPath({
    serverAddress: (id) => addresses.get(id) ?? "192.0.2.1",
    reconcileMs: 100,
  });
  const client = await adminClient(cluster);
  const endpoints = new Map<string, KubeProxyNode>();
  const serverOf = new Map<string, number>();
  let nodeIndex = 0;
  // The Service's one endpoint ("the Pods"), on an address of this machine every Node routes to.
  await sh(`ip addr add ${BACKEND.hostname}/32 dev lo`, true);
  const backend = Deno.serve({ ...BACKEND, onListen: () => {} }, async () => {
    await new Promise((r) => setTimeout(r, o.answerMs ?? 300));
    return new Response("served by the backend\n");
  });
  const addNode = async (name: string) => {
    const server = sim.addServer({ name, location: "fsn1" });
    serverOf.set(name, server.id);
    const node = await KubeProxyNode.start(cluster, ++nodeIndex, name);
    addresses.set(server.id, node.address);
    endpoints.set(name, node);
    await registerNode(client, name);
  };
  for (let i = 1; i <= count; i++) await addNode(`w${i}`);
  const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service", "--drift-repair-period=0"], {
    HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS: String(o.drain),
    HCLOUD_LOAD_BALANCERS_KUBE_PROXY_HEALTH_CHECK: "true",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL: "3s",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT: "1s",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: "0",
    HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
  });
  let load: RequestLoad | undefined;
  try {
    await client.create(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "default" },
      spec: {
        type: "LoadBalancer",
        // No selector: the Service's one endpoint is the backend (an EndpointSlice of our own).
        ports: [{ port: SERVICE_PORT, protocol: "TCP", targetPort: BACKEND.port }],
      },
    }, { namespace: "default" });
    await client.create(ENDPOINT_SLICES, {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "web-backend",
        namespace: "default",
        labels: { "kubernetes.io/service-name": "web" },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: [BACKEND.hostname], conditions: { ready: true } }],
      ports: [{ port: BACKEND.port, protocol: "TCP" }],
    }, { namespace: "default" });
    const lb = () => [...sim.world.loadBalancers.values()][0];
    const healthy = (serverId: number) =>
      sim.world.targetHealth.get(`${lb()?.id}:${serverId}:${SERVICE_PORT}`) === "healthy";
    const targets = () => (lb() ? targetServerIds(sim.world, lb()!) : []);
    await eventually(() => !!lb() && [...serverOf.values()].every(healthy), 60_000);
    const address = dataPath.address(lb()!.id, SERVICE_PORT)!;
    const url = `http://${address.hostname}:${address.port}/`;

    const started = Date.now();
    const auditStart = sim.audit.length;
    load = startLoad(url, o.ratePerSecond ?? 20, "served by");

    for (let i = 1; i <= count; i++) {
      const name = `w${i}`;
      const id = serverOf.get(name)!;
      await client.patch(NODES, name, "merge", {
        spec: { taints: [{ key: "ToBeDeletedByClusterAutoscaler", value: "1", effect: "NoSchedule" }] },
      });
      await eventually(() => !targets().includes(id), 60_000);
      await client.delete(NODES, name);
      sim.control.deleteServer(id);
      await endpoints.get(name)!.stop();
      endpoints.delete(name);
      serverOf.delete(name);
      await addNode(`${name}-new`);
      const replacement = serverOf.get(`${name}-new`)!;
      await eventually(() => healthy(replacement), 60_000);
    }
    const result = await load.stop();
    return {
      drain: o.drain,
      ...result,
      nodesReplaced: count,
      seconds: Math.round((Date.now() - started) / 1000),
      cloudRequests: sim.audit.length - auditStart,
    };
  } finally {
    await load?.stop();
    await ccm.stop();
    for (const ep of endpoints.values()) await ep.stop();
    await backend.shutdown();
    await sh(`ip addr del ${BACKEND.hostname}/32 dev lo`, true);
    await s.finish();
    client.transport.close();
    await cluster.stop();
  }
}
