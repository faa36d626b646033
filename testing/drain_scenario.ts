/**
 * Every Node of a cluster replaced under load, through a balancer's data path: requests (bounded in
 * rate and time, loopback only) flow through the simulator's balancer to the Nodes' endpoints while
 * each Node in turn is marked by the autoscaler, taken out of the balancer by the CCM, deleted with
 * its server, and replaced by a new one. Counts the requests that fail, with the CCM's graceful
 * draining on or off (tests/drain_proof_test.ts, bench/bench.ts).
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { TestCluster } from "./kube_cluster.ts";
import { startTestSim } from "./sim_harness.ts";
import { adminClient, registerNode, startCcm } from "./ccm_harness.ts";
import { eventually } from "./helpers.ts";
import { nodeAddress, NodeEndpoints } from "./node_endpoints.ts";
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
  /** How long the Nodes take to answer (requests in flight when a target goes are the ones at risk). */
  answerMs?: number;
}

const SERVICE_PORT = 8080;

/** Runs the scenario once; everything it starts is stopped before it returns. */
export async function runDrainScenario(o: DrainScenarioOptions): Promise<DrainRun> {
  const count = o.nodes ?? 3;
  const cluster = await TestCluster.start();
  const s = await startTestSim();
  const sim = s.sim;
  const dataPath = sim.enableDataPath({ serverAddress: nodeAddress, reconcileMs: 100 });
  const client = await adminClient(cluster);
  const endpoints = new Map<string, NodeEndpoints>();
  const serverOf = new Map<string, number>();
  let nodePort = 0;
  const addNode = async (name: string) => {
    const server = sim.addServer({ name, location: "fsn1" });
    serverOf.set(name, server.id);
    const ep = new NodeEndpoints(nodeAddress(server.id), name);
    endpoints.set(name, ep);
    if (nodePort) ep.serveNodePort(nodePort, o.answerMs ?? 300);
    await registerNode(client, name);
  };
  for (let i = 1; i <= count; i++) await addNode(`w${i}`);
  // kube-proxy watches its Node: here a poll of the Node list.
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const nodes = new Map((await client.list(NODES)).items.map((n: Node) => [n.metadata!.name!, n]));
      for (const [name, ep] of endpoints) ep.observe(nodes.get(name));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service", "--drift-repair-period=0"], {
    HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS: String(o.drain),
    HCLOUD_LOAD_BALANCERS_KUBE_PROXY_HEALTH_CHECK: "true",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL: "3s",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT: "1s",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: "0",
    HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
  });
  const http = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  let load: Promise<void> | undefined;
  let loading = true;
  const result = { requests: 0, failed: 0 };
  try {
    const svc = await client.create(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "default" },
      spec: {
        type: "LoadBalancer",
        selector: { app: "web" },
        ports: [{ port: SERVICE_PORT, protocol: "TCP" }],
      },
    }, { namespace: "default" });
    nodePort = svc.spec!.ports![0].nodePort!;
    for (const ep of endpoints.values()) ep.serveNodePort(nodePort, o.answerMs ?? 300);
    const lb = () => [...sim.world.loadBalancers.values()][0];
    const healthy = (serverId: number) =>
      sim.world.targetHealth.get(`${lb()?.id}:${serverId}:${SERVICE_PORT}`) === "healthy";
    const targets = () => (lb() ? targetServerIds(sim.world, lb()!) : []);
    await eventually(() => !!lb() && [...serverOf.values()].every(healthy), 60_000);
    const address = dataPath.address(lb()!.id, SERVICE_PORT)!;
    const url = `http://${address.hostname}:${address.port}/`;

    const started = Date.now();
    const auditStart = sim.audit.length;
    load = (async () => {
      const inFlight = new Set<Promise<void>>();
      while (loading) {
        const request = (async () => {
          result.requests++;
          try {
            const res = await fetch(url, { client: http, signal: AbortSignal.timeout(10_000) });
            const text = await res.text();
            if (!res.ok || !text.startsWith("served by")) result.failed++;
          } catch {
            result.failed++;
          }
        })();
        inFlight.add(request);
        request.finally(() => inFlight.delete(request));
        await new Promise((r) => setTimeout(r, 1000 / (o.ratePerSecond ?? 20)));
      }
      await Promise.all(inFlight);
    })();

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
    loading = false;
    await load;
    return {
      drain: o.drain,
      ...result,
      nodesReplaced: count,
      seconds: Math.round((Date.now() - started) / 1000),
      cloudRequests: sim.audit.length - auditStart,
    };
  } finally {
    loading = false;
    await load?.catch(() => {});
    watching = false;
    await watcher.catch(() => {});
    http.close();
    await ccm.stop();
    for (const ep of endpoints.values()) await ep.stop();
    await s.finish();
    client.transport.close();
    await cluster.stop();
  }
}
