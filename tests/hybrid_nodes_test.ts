/**
 * A hybrid cluster against a real apiserver and the simulator's Cloud and Robot APIs: a Cloud
 * server's Node, a Robot server's Node and two Nodes that are not Hetzner's (a home-lab box and
 * another cloud's machine), labelled `node.deno-ccm.io/managed=false`. The Hetzner Nodes are served
 * as always; the foreign ones are touched by nothing: no lookup in either API, no write, no event,
 * no route, no target, and a NotReady one stays. Node IPAM is on: a Robot Node registered without
 * pod CIDRs gets an IPv4 range and one of its Robot /64, a foreign one nothing.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { registerNode, setReady, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { MANAGED_LABEL, UNINITIALIZED_TAINT } from "../kube/well_known.ts";

Deno.test({
  name: "hybrid: Nodes that are not Hetzner's are left alone by every controller, the others served",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    await (await fetch(`${sim.url}/_sim/seed`, {
      method: "POST",
      body: JSON.stringify({
        networks: [{
          name: "k8s",
          ip_range: "10.0.0.0/8",
          subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
        }],
      }),
    })).body?.cancel();
    const netId = [...sim.world.networks.values()].find((n) => n.name === "k8s")!.id;
    const cloud = sim.addServer({
      name: "cloud-1",
      location: "fsn1",
      private_net: [{ network: netId, ip: "10.0.0.2" }],
    });
    const bm = sim.robot.add({ server_name: "bm-1", product: "AX41-NVMe", dc: "FSN1-DC14" });
    const bm2 = sim.robot.add({ server_name: "bm-2", product: "AX41-NVMe", dc: "FSN1-DC14" });
    // A home box named like a Cloud server elsewhere in the project would still not be looked up.
    sim.addServer({ name: "home-1", location: "fsn1" });
    const foreign = { [MANAGED_LABEL]: "false" };
    await registerNode(client, "cloud-1", { podCIDRs: ["10.244.1.0/24"] });
    await registerNode(client, "bm-1", { podCIDRs: ["10.244.2.0/24"] });
    await registerNode(client, "home-1", {
      podCIDRs: ["10.244.3.0/24"],
      labels: foreign,
      nodeIp: "192.168.1.5",
    });
    await registerNode(client, "aws-1", {
      podCIDRs: ["10.244.4.0/24"],
      labels: foreign,
      providerID: "aws:///eu-central-1a/i-0abc",
    });
    // Without pod CIDRs: node IPAM gives the Robot one its ranges, the foreign one nothing.
    await registerNode(client, "bm-2", {});
    await registerNode(client, "home-2", { labels: foreign, nodeIp: "192.168.1.6" });
    const before = {
      home: await client.get(NODES, "home-1"),
      aws: await client.get(NODES, "aws-1"),
      home2: await client.get(NODES, "home-2"),
    };
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node,cloud-node-lifecycle,service,route,node-ipam-controller",
      "--node-monitor-period=1s",
      "--allocate-node-cidrs=true",
      // The simulator's Robot ranges are in 2a01:4f8::/32, its Cloud ranges in 2001:db8::/32.
      "--cluster-cidr=10.244.0.0/16,2000::/3",
    ], {
      ROBOT_ENABLED: "true",
      ROBOT_USER: "robot-user",
      ROBOT_PASSWORD: "robot-password",
      ROBOT_ENDPOINT: sim.robotEndpoint,
      HCLOUD_NETWORK: "k8s",
      HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
    });
    const node = (name: string) => client.get(NODES, name) as Promise<Node>;
    try {
      for (const name of ["cloud-1", "bm-1", "bm-2"]) {
        await eventually(async () =>
          !(await node(name)).spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT)
        );
        await setReady(client, name, true);
      }
      assertEquals((await node("bm-1")).spec?.providerID, `hrobot://${bm.server_number}`);
      // A load balancer: the Cloud Node by label selector, the Robot Node by IP; no foreign Node.
      const service: Service = {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: "default" },
        spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 80, protocol: "TCP" }] },
      };
      await client.create(SERVICES, service);
      await eventually(async () =>
        !!(await client.get(SERVICES, "web", { namespace: "default" })).status?.loadBalancer?.ingress?.length
      );
      const lb = [...sim.world.loadBalancers.values()][0];
      assertEquals(
        lb.targets.filter((t) => t.type === "ip").map((t) => t.ip!.ip).sort(),
        [bm.server_ip, bm2.server_ip].sort(),
      );
      // The Robot Node without pod CIDRs: the first free /24 (the others' are taken) and subnet 1 of
      // its Robot /64.
      await eventually(async () => ((await node("bm-2")).spec?.podCIDRs ?? []).length > 0);
      assertEquals((await node("bm-2")).spec?.podCIDRs, [
        "10.244.0.0/24",
        `${bm2.server_ipv6_net!.replace(/::$/, "")}:1::/80`,
      ]);
      assertEquals(cloud.labels["deno-ccm/lb-target"] !== undefined, true);
      const homeServer = [...sim.world.servers.values()].find((s) => s.name === "home-1")!;
      assertEquals(homeServer.labels["deno-ccm/lb-target"], undefined, "the namesake server is no target");
      // Routes: the Cloud Node's only.
      await eventually(() => sim.world.networks.get(netId)!.routes.length === 1);
      // The foreign home box goes NotReady, for several monitor periods: it stays.
      await setReady(client, "home-1", false);
      await new Promise((r) => setTimeout(r, 4_000));
      for (
        const [name, was] of [["home-1", before.home], ["aws-1", before.aws], [
          "home-2",
          before.home2,
        ]] as const
      ) {
        const now = await node(name);
        assertEquals(now.spec?.podCIDRs, was.spec?.podCIDRs, `${name}: pod CIDRs untouched`);
        assertEquals(now.spec?.providerID, was.spec?.providerID, `${name}: provider ID untouched`);
        assertEquals(now.spec?.taints, was.spec?.taints, `${name}: taints untouched`);
        assertEquals(now.metadata?.labels, was.metadata?.labels, `${name}: labels untouched`);
        assertEquals(
          (now.status?.conditions ?? []).some((c) => c.type === "NetworkUnavailable"),
          false,
          `${name}: no route condition`,
        );
        assertEquals(await eventsOf(client, name), [], `${name}: no event`);
      }
      assertEquals(sim.world.networks.get(netId)!.routes.map((r) => r.destination), ["10.244.1.0/24"]);
      // No request named them (lookups by name would; the server list is shared, so the proof that
      // home-1 was not matched to the Cloud server of its name is its provider ID, above).
      const named = sim.audit.filter((e) => /home-[12]|aws-1|i-0abc/.test(`${e.path}?${e.query}`));
      assertEquals(named.map((e) => e.route), []);
    } finally {
      await close(ccm);
    }
  },
});
