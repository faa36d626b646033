/**
 * The proof of the firewall that follows the Services (issue 46), through the simulator's data path
 * with a real kube-proxy per Node: before the operator applies the firewall every NodePort answers
 * the world; after, the world reaches a LoadBalancer Service only through its balancer and an
 * opted-in NodePort Service only from its ranges, health checks pass, and not one request through
 * the balancer fails while the firewall is applied, Services come, change and go, and a Node joins
 * (covered by the firewall's label selector before it becomes a target). Then, steady, nothing reads
 * the firewall on a timer; and when the operator's tooling replaces its rules, the balancers' failing
 * health checks (seen in the drift list) bring them back.
 */
import { type RequestLoad, startLoad } from "../testing/request_load.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { eventually } from "../testing/helpers.ts";
import { ENDPOINT_SLICES, sh } from "../testing/drain_scenario.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { KubeProxyNode } from "../testing/kube_proxy.ts";
import { SERVICES } from "../kube/resources.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import type { DataPath } from "../hcloud_sim/data_path.ts";

/** The Services' one endpoint ("the Pods"), on an address of this machine every Node routes to. */
const BACKEND = { hostname: "10.201.0.3", port: 9003 };
const WORLD = "198.51.100.77";
const OFFICE = "203.0.113.9";

function service(name: string, spec: Service["spec"], annotations: Record<string, string> = {}): Service {
  return { apiVersion: "v1", kind: "Service", metadata: { name, namespace: "default", annotations }, spec };
}

/** An HTTP GET from a client outside at `source` to `port` of a server's public address. */
async function directGet(
  dataPath: DataPath,
  source: string,
  serverId: number,
  port: number,
): Promise<boolean> {
  let conn: Deno.TcpConn;
  try {
    conn = await dataPath.connectFrom(source, serverId, port);
  } catch {
    return false;
  }
  try {
    await conn.write(new TextEncoder().encode("GET / HTTP/1.0\r\nHost: node\r\n\r\n"));
    const text = await new Response(conn.readable).text();
    return text.includes("served by the backend");
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "firewall proof: NodePorts shut to the world, open through the balancer and from allowed ranges; 0 failed requests",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const sim = s.sim;
    const addresses = new Map<number, string>();
    const dataPath = sim.enableDataPath({
      serverAddress: (id) => addresses.get(id) ?? "192.0.2.1",
      reconcileMs: 100,
    });
    const nodes: KubeProxyNode[] = [];
    const servers = new Map<string, number>();
    await sh(`ip addr add ${BACKEND.hostname}/32 dev lo`, true);
    const backend = Deno.serve(
      { ...BACKEND, onListen: () => {} },
      () => new Response("served by the backend\n"),
    );
    let ccm: Awaited<ReturnType<typeof startCcm>> | undefined;
    const http = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    let load: RequestLoad | undefined;
    const addNode = async (name: string) => {
      const server = sim.addServer({ name, location: "fsn1", labels: { role: "node" } });
      const node = await KubeProxyNode.start(cluster, nodes.length + 1, name);
      addresses.set(server.id, node.address);
      nodes.push(node);
      servers.set(name, server.id);
      await registerNode(client, name);
    };
    try {
      for (const name of ["w1", "w2"]) await addNode(name);
      // A short drift period: the repair at the end waits for one drift list, not ten minutes.
      ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service", "--drift-repair-period=10s"], {
        HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
        HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes",
        HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "default",
        HCLOUD_LOAD_BALANCERS_KUBE_PROXY_HEALTH_CHECK: "true",
        HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL: "3s",
        HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT: "1s",
        HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: "0",
      });
      const backendPort = [{ name: "http", port: 8080, protocol: "TCP" as const, targetPort: BACKEND.port }];
      for (const name of ["web", "old"]) {
        await client.create(SERVICES, service(name, { type: "LoadBalancer", ports: backendPort }), {
          namespace: "default",
        });
      }
      await client.create(
        SERVICES,
        service("admin", { type: "NodePort", ports: backendPort }, {
          "service.deno-ccm.io/firewall-open-nodeports": "true",
          "service.deno-ccm.io/firewall-source-ranges": "203.0.113.0/24",
        }),
        { namespace: "default" },
      );
      for (const name of ["web", "old", "admin", "api"]) {
        await client.create(ENDPOINT_SLICES, {
          apiVersion: "discovery.k8s.io/v1",
          kind: "EndpointSlice",
          metadata: {
            name: `${name}-backend`,
            namespace: "default",
            labels: { "kubernetes.io/service-name": name },
          },
          addressType: "IPv4",
          endpoints: [{ addresses: [BACKEND.hostname], conditions: { ready: true } }],
          ports: [{ name: "http", port: BACKEND.port, protocol: "TCP" }],
        }, { namespace: "default" });
      }
      const balancer = (name: string) =>
        [...sim.world.loadBalancers.values()].find((lb) =>
          uids.has(name) && lb.labels["hcloud-ccm/service-uid"] === uids.get(name)
        );
      const uids = new Map<string, string>();
      const uid = async (name: string) =>
        uids.set(name, (await client.get(SERVICES, name, { namespace: "default" })).metadata!.uid!);
      await uid("web");
      await uid("old");
      const healthyOn = (name: string, serverId: number) => {
        const lb = balancer(name);
        return !!lb && lb.services.length > 0 &&
          lb.services.every((svc) =>
            sim.world.targetHealth.get(`${lb.id}:${serverId}:${svc.listen_port}`) === "healthy"
          );
      };
      await eventually(() => [...servers.values()].every((id) => healthyOn("web", id)), 60_000);
      type Shown = { id: number; rules: { source_ips: string[] }[]; applied_to: unknown[] };
      const firewall = async () =>
        (await s.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0] as Shown | undefined;
      // The sync at start came before the balancers; the next follows at most a minute later.
      await eventually(() => [...servers.values()].every((id) => healthyOn("old", id)), 60_000);
      const opened = async (name: string) =>
        ((await firewall())?.rules ?? []).some((r) =>
          r.source_ips.includes(`${balancer(name)!.public_net.ipv4!.ip}/32`)
        );
      await eventually(async () => await opened("web") && await opened("old"), 120_000);
      const made = (await firewall())!;
      assertEquals(made.applied_to, [], "the CCM never applies the firewall itself");
      const nodePort = async (name: string) =>
        (await client.get(SERVICES, name, { namespace: "default" })).spec!.ports![0].nodePort!;
      const w1 = servers.get("w1")!;
      const table = async () => ({
        "world → web's NodePort": await directGet(dataPath, WORLD, w1, await nodePort("web")),
        "world → admin's NodePort": await directGet(dataPath, WORLD, w1, await nodePort("admin")),
        "office → admin's NodePort": await directGet(dataPath, OFFICE, w1, await nodePort("admin")),
      });
      // Before the firewall: every NodePort answers the world (once kube-proxy has programmed them).
      await eventually(async () => Object.values(await table()).every((reached) => reached), 30_000);
      const before = await table();

      // Requests through web's balancer from now on, each on its own connection.
      const address = dataPath.address(balancer("web")!.id, 8080)!;
      await eventually(async () => {
        const res = await fetch(`http://${address.hostname}:${address.port}/`, { client: http }).catch(() =>
          undefined
        );
        return (await res?.text())?.startsWith("served by") ?? false;
      }, 30_000);
      load = startLoad(`http://${address.hostname}:${address.port}/`, 10, "served by");

      // The operator applies the CCM's firewall to the Nodes (by label): its rules are there already.
      const applied = await s.api("POST", `/firewalls/${made.id}/actions/apply_to_resources`, {
        apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
      });
      assertEquals(applied.status, 201);
      const after = await table();
      assertEquals(after, {
        "world → web's NodePort": false,
        "world → admin's NodePort": false,
        "office → admin's NodePort": true,
      }, "after: the world only through the balancer; admin only from its range");
      console.log(`firewall before/after: ${JSON.stringify({ before, after })}`);

      // At once: a Service comes (a new balancer), web gets a second port, a Service goes, a Node joins.
      const oldIp = balancer("old")!.public_net.ipv4!.ip!;
      await client.create(SERVICES, service("api", { type: "LoadBalancer", ports: backendPort }), {
        namespace: "default",
      });
      await uid("api");
      await client.patch(SERVICES, "web", "merge", {
        spec: {
          ports: [...backendPort, { name: "alt", port: 8081, protocol: "TCP", targetPort: BACKEND.port }],
        },
      }, { namespace: "default" });
      await client.delete(SERVICES, "old", { namespace: "default" });
      await addNode("w3");
      const w3 = servers.get("w3")!;
      // w3 carries the label: the firewall covers it before it is a target, and its checks pass.
      await eventually(() => targetServerIds(sim.world, balancer("web")!).includes(w3), 60_000);
      await eventually(() => healthyOn("web", w3), 60_000);
      // The next firewall sync (at most a minute after the last) opens api's balancer and web's new
      // port, and takes the gone Service's balancer out.
      await eventually(
        () => [...servers.values()].every((id) => healthyOn("api", id) && healthyOn("web", id)),
        120_000,
      );
      await eventually(
        async () => !((await firewall())?.rules ?? []).some((r) => r.source_ips.includes(`${oldIp}/32`)),
        60_000,
      );
      assertEquals(
        await directGet(dataPath, WORLD, w3, await nodePort("web")),
        false,
        "w3's NodePorts are shut too",
      );
      const result = await load.stop();
      console.log(
        `${result.requests} requests through the balancer: ${result.failed} failed; dropped by firewalls: ${dataPath.dropped}`,
      );
      assert(result.requests > 100, `only ${result.requests} requests`);
      assertEquals(result.failed, 0, "no request through the balancer failed");

      // Steady: four drift periods without a read of the firewall (the old design read it each one).
      const quiet = Date.now();
      await new Promise((r) => setTimeout(r, 40_000));
      assertEquals(sim.count(/^GET \/firewalls$/, quiet), 0, "nothing reads the firewall on a timer");
      assert(sim.count(/^GET \/load_balancers$/, quiet) >= 3, "the drift lists ran meanwhile");

      // The operator's tooling replaces the rules with its own (none): the balancers' checks fail, the
      // drift list shows it, and the next sync puts back every rule the CCM keeps.
      await s.api("POST", `/firewalls/${made.id}/actions/set_rules`, { rules: [] });
      await eventually(() => !healthyOn("web", w1), 30_000);
      await eventually(() => [...servers.values()].every((id) => healthyOn("web", id)), 120_000);
      assert(await opened("api"), "api's balancer is opened again too");
      assertEquals(await directGet(dataPath, OFFICE, w1, await nodePort("admin")), true, "and admin's range");
      assertEquals(await directGet(dataPath, WORLD, w1, await nodePort("web")), false, "the world stays out");
    } finally {
      await load?.stop();
      http.close();
      await ccm?.stop();
      for (const node of nodes) await node.stop();
      await backend.shutdown();
      await sh(`ip addr del ${BACKEND.hostname}/32 dev lo`, true);
      await close();
    }
  },
});
