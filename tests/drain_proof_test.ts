/**
 * The proof of graceful draining, through the simulator's data path: every Node of the cluster is
 * marked by the autoscaler, taken out of the balancer, deleted with its server and replaced while
 * requests flow through the balancer; with the CCM's draining on, not one fails
 * (testing/drain_scenario.ts; bench/report.md has the same run with draining off).
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { quietLogs } from "../testing/helpers.ts";
import { BACKEND, ENDPOINT_SLICES, runDrainScenario } from "../testing/drain_scenario.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { KubeProxyNode } from "../testing/kube_proxy.ts";
import { SERVICES } from "../kube/resources.ts";

Deno.test({
  name: "draining proof: every Node replaced under load, 0 failed requests with draining on",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    quietLogs();
    const run = await runDrainScenario({ drain: true });
    console.log(
      `${run.requests} requests over ${run.seconds} s while ${run.nodesReplaced} Nodes were replaced: ${run.failed} failed`,
    );
    assert(run.requests > 100, `only ${run.requests} requests`);
    assertEquals(run.failed, 0);
  },
});

Deno.test({
  name:
    "externalTrafficPolicy Local through a real kube-proxy: only the Node with an endpoint passes the check and gets traffic",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const addresses = new Map<number, string>();
    const dataPath = s.sim.enableDataPath({
      serverAddress: (id) => addresses.get(id) ?? "192.0.2.1",
      reconcileMs: 100,
    });
    const nodes: KubeProxyNode[] = [];
    let ccm: Awaited<ReturnType<typeof startCcm>> | undefined;
    let pod: Deno.ChildProcess | undefined;
    try {
      const ids: number[] = [];
      for (const i of [1, 2]) {
        const server = s.sim.addServer({ name: `w${i}`, location: "fsn1" });
        const node = await KubeProxyNode.start(cluster, i, `w${i}`);
        addresses.set(server.id, node.address);
        nodes.push(node);
        ids.push(server.id);
        await registerNode(client, `w${i}`);
      }
      ccm = await startCcm(cluster, s.sim, ["--controllers=cloud-node,service", "--drift-repair-period=0"], {
        HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
      });
      await client.create(SERVICES, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "local", namespace: "default" },
        spec: {
          type: "LoadBalancer",
          externalTrafficPolicy: "Local",
          ports: [{ port: 8080, protocol: "TCP", targetPort: BACKEND.port }],
        },
      }, { namespace: "default" });
      // The Service's one endpoint is a "Pod" on w1: a server inside w1's namespace (Local keeps the
      // client's address, so the answer must go back through the Node, as on a real one).
      pod = nodes[0].spawnInside([
        "python3",
        "-m",
        "http.server",
        "--bind",
        nodes[0].address,
        String(BACKEND.port),
      ]);
      await client.create(ENDPOINT_SLICES, {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: {
          name: "local-1",
          namespace: "default",
          labels: { "kubernetes.io/service-name": "local" },
        },
        addressType: "IPv4",
        endpoints: [{ addresses: [nodes[0].address], nodeName: "w1", conditions: { ready: true } }],
        ports: [{ port: BACKEND.port, protocol: "TCP" }],
      }, { namespace: "default" });
      const svc = await client.get(SERVICES, "local", { namespace: "default" });
      const lb = () => [...s.sim.world.loadBalancers.values()][0];
      const health = (id: number) => s.sim.world.targetHealth.get(`${lb()?.id}:${id}:8080`);
      await eventually(() => health(ids[0]) === "healthy", 60_000);
      // Our rule for Local (a listed difference from the official CCM): kube-proxy's health check node port.
      const check = lb()!.services[0].health_check;
      assertEquals([check.protocol, check.port, check.http?.path], [
        "http",
        svc.spec!.healthCheckNodePort,
        "/healthz",
      ]);
      assert(health(ids[1]) !== "healthy", `w2 has no endpoint, yet its check says ${health(ids[1])}`);
      const address = dataPath.address(lb()!.id, 8080)!;
      const http = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
      try {
        for (let i = 0; i < 20; i++) {
          const res = await fetch(`http://${address.hostname}:${address.port}/`, { client: http });
          await res.body?.cancel();
          assertEquals(res.status, 200);
        }
      } finally {
        http.close();
      }
    } finally {
      await ccm?.stop();
      for (const node of nodes) await node.stop();
      try {
        pod?.kill("SIGTERM");
        await pod?.status;
      } catch { /* gone */ }
      await close();
    }
  },
});
