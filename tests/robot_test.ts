/**
 * Robot (dedicated root servers) in a mixed cluster, against a real apiserver and the simulator's
 * Cloud and Robot APIs: Robot Nodes initialized as the official CCM does (provider ID, labels,
 * addresses per family, no made-up IPv6), load balancers target them by IP next to the Cloud
 * Nodes' targets, routes skip them with an event, their lifecycle follows Robot (shutdown taint,
 * deletion confirmed by a fresh list, never on an outage), one list serves them all, and wrong
 * credentials make /readyz false without showing the password.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, setReady, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { createProvider } from "../providers/registry.ts";
import { parseFlags } from "../config/flags.ts";
import { resolveControllers } from "../config/controllers_flag.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { Registry } from "../lib/metrics.ts";

const SHUTDOWN_TAINT = "node.cloudprovider.kubernetes.io/shutdown";

function robotEnv(endpoint: string, password = "robot-password"): Record<string, string> {
  return {
    ROBOT_ENABLED: "true",
    ROBOT_USER: "robot-user",
    ROBOT_PASSWORD: password,
    ROBOT_ENDPOINT: endpoint,
    HCLOUD_NETWORK: "k8s",
    HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
  };
}

Deno.test({
  name:
    "robot: mixed Cloud and Robot Nodes are initialized, targeted, routed around and deleted as in the official CCM",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    // The Cloud side: a network with one server in it.
    const seeded = await fetch(`${sim.url}/_sim/seed`, {
      method: "POST",
      body: JSON.stringify({
        networks: [{
          name: "k8s",
          ip_range: "10.0.0.0/8",
          subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
        }],
      }),
    });
    await seeded.body?.cancel();
    const netId = [...sim.world.networks.values()].find((n) => n.name === "k8s")!.id;
    const cloud = sim.addServer({
      name: "cloud-1",
      location: "fsn1",
      private_net: [{ network: netId, ip: "10.0.0.2" }],
    });
    const bm1 = sim.robot.add({ server_name: "bm-1", product: "AX41-NVMe", dc: "FSN1-DC14" });
    const bm2 = sim.robot.add({
      server_name: "bm-2",
      server_ipv6_net: null,
      product: "EX44",
      dc: "HEL1-DC2",
    });
    await registerNode(client, "cloud-1", { podCIDRs: ["10.244.1.0/24"] });
    await registerNode(client, "bm-1", { podCIDRs: ["10.244.2.0/24"] });
    // bm-2 joins by its legacy provider ID and brings a vSwitch InternalIP from the kubelet.
    await registerNode(client, "bm-2", {
      providerID: `hcloud://bm-${bm2.server_number}`,
      podCIDRs: ["10.244.3.0/24"],
    });
    await client.patch(NODES, "bm-2", "merge", {
      status: {
        addresses: [{ type: "Hostname", address: "bm-2" }, { type: "InternalIP", address: "10.1.0.12" }],
      },
    }, { subresource: "status" });
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node,cloud-node-lifecycle,service,route",
      "--node-monitor-period=1s",
      "--cluster-cidr=10.244.0.0/16",
      "--allocate-node-cidrs=false",
    ], { ...robotEnv(sim.robotEndpoint), ROBOT_CACHE_TIMEOUT: "2s" });
    const node = (name: string) => client.get(NODES, name) as Promise<Node>;
    try {
      await eventually(async () =>
        (await client.list(NODES)).items.every((n) =>
          !n.spec?.taints?.some((t) => t.key === "node.cloudprovider.kubernetes.io/uninitialized")
        )
      );
      for (const name of ["cloud-1", "bm-1", "bm-2"]) await setReady(client, name, true);
      const n1 = await node("bm-1");
      assertEquals(n1.spec?.providerID, `hrobot://${bm1.server_number}`);
      const labels = n1.metadata!.labels!;
      assertEquals(
        [
          labels["node.kubernetes.io/instance-type"],
          labels["topology.kubernetes.io/zone"],
          labels["topology.kubernetes.io/region"],
          labels["instance.hetzner.cloud/provided-by"],
          labels["instance.hetzner.cloud/is-root-server"],
        ],
        ["AX41-NVMe", "fsn1-dc14", "fsn1", "robot", "true"],
      );
      assertEquals(n1.status?.addresses, [
        { type: "Hostname", address: "bm-1" },
        { type: "ExternalIP", address: bm1.server_ip! },
      ]);
      const n2 = await node("bm-2");
      assertEquals(n2.spec?.providerID, `hcloud://bm-${bm2.server_number}`, "a legacy provider ID is kept");
      assertEquals(n2.status?.addresses, [
        { type: "Hostname", address: "bm-2" },
        { type: "ExternalIP", address: bm2.server_ip! },
        { type: "InternalIP", address: "10.1.0.12" },
      ]);
      assertEquals((await node("cloud-1")).metadata!.labels!["instance.hetzner.cloud/provided-by"], "cloud");

      // Routes: the Cloud Node's only; the Robot Nodes are told why they get none.
      await eventually(() => sim.world.networks.get(netId)!.routes.length === 1);
      assertEquals(sim.world.networks.get(netId)!.routes[0], {
        destination: "10.244.1.0/24",
        gateway: "10.0.0.2",
      });
      await eventually(async () =>
        (await eventsOf(client, "bm-1")).some((e) => e.startsWith("Normal RouteSkipped"))
      );

      // A load balancer: the Cloud Node by its label selector, the Robot Nodes by their public IPs.
      const service: Service = {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: "default" },
        spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 80, protocol: "TCP" }] },
      };
      await client.create(SERVICES, service);
      const lb = () => [...sim.world.loadBalancers.values()][0];
      const ipTargets = () =>
        (lb()?.targets ?? []).filter((t) => t.type === "ip").map((t) => t.ip!.ip).sort();
      await eventually(() =>
        JSON.stringify(ipTargets()) === JSON.stringify([bm1.server_ip, bm2.server_ip].sort())
      );
      assert(
        lb().targets.some((t) => t.type === "label_selector"),
        "the Cloud Node keeps its selector target",
      );

      // Powered off in Robot while NotReady: the shutdown taint.
      await fetch(`${sim.url}/_sim/robot/servers/${bm1.server_number}/power`, {
        method: "POST",
        body: JSON.stringify({ power: "off" }),
      }).then((r) => r.body?.cancel());
      await setReady(client, "bm-1", false);
      await eventually(async () =>
        (await node("bm-1")).spec?.taints?.some((t) => t.key === SHUTDOWN_TAINT) ?? false
      );

      // A Robot outage deletes nothing; a server cancelled in Robot takes its Node and its target.
      await fetch(`${sim.url}/_sim/robot/outage`, { method: "PUT", body: JSON.stringify({ status: 503 }) })
        .then((r) => r.body?.cancel());
      await setReady(client, "bm-2", false);
      await new Promise((r) => setTimeout(r, 4000));
      assertEquals((await client.list(NODES)).items.length, 3, "no Node is deleted while Robot is down");
      await fetch(`${sim.url}/_sim/robot/outage`, { method: "PUT", body: JSON.stringify({}) })
        .then((r) => r.body?.cancel());
      sim.control.cancelRobotServer(bm2.server_number);
      await eventually(
        async () => !(await client.list(NODES)).items.some((n) => n.metadata?.name === "bm-2"),
        30_000,
      );
      await eventually(() => JSON.stringify(ipTargets()) === JSON.stringify([bm1.server_ip]));
      assert(
        (await client.list(NODES)).items.some((n) => n.metadata?.name === "bm-1"),
        "the powered-off one stays",
      );

      // One list serves every Robot Node: the server list is Robot's only frequent call.
      const calls = Object.groupBy(sim.robot.audit, (e) => e.route);
      assertEquals(Object.keys(calls).filter((r) => r !== "GET /server" && r !== "GET /reset/{number}"), []);
      assert(!cloud.labels["nothing"], "the Cloud server is untouched");
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name:
    "robot: wrong credentials make /readyz false naming the cause, never the password, and nothing crashes",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { sim, close } = await testEnvironment();
    try {
      const secret = "hunter2-not-the-password";
      const { flags } = parseFlags(["--leader-elect=false"]);
      const controllers = resolveControllers(flags.controllers);
      const created = await createProvider(flags, controllers.enabled, {
        HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
        HCLOUD_ENDPOINT: sim.endpoint,
        HCLOUD_METRICS_ENABLED: "false",
        ...robotEnv(sim.robotEndpoint, secret),
        HCLOUD_NETWORK: "",
      }, new Registry());
      assertEquals(created.errors, []);
      const provider = created.provider!;
      await provider.initialize!({}, new AbortController().signal);
      const problem = provider.problem!() ?? "";
      assert(problem.includes("ROBOT_USER") && problem.includes("401"), problem);
      assert(!problem.includes(secret), "the password never shows");
      // A Robot Node waits (an error, retried), never a crash or a deletion.
      const robotNode: Node = {
        metadata: { name: "bm-9", creationTimestamp: new Date(0).toISOString() },
        spec: { providerID: "hrobot://9" },
      };
      const failure = await provider.instances!.instanceMetadata(robotNode).then(() => "", (e) => String(e));
      assert(failure.includes("401") && !failure.includes(secret), failure);
      const exists = await provider.instances!.instanceExists(robotNode).then(
        (v) => String(v),
        (e) => String(e),
      );
      assert(exists !== "false", "an unreadable Robot never deletes a Node");
      provider.close?.();
    } finally {
      await close();
    }
  },
});
