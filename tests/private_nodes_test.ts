/**
 * Nodes without a public IPv4 (issue 63 item 5; DigitalOcean 2026-07, hetzner-k3s' IPv6-only nodes,
 * hcloud-k8s): a server with only a private network address, and one with only IPv6 and the network,
 * become Nodes with the addresses they have (dual-stack clusters list the IPv6 one), and a balancer
 * reaches every Node through the network once the Service (or `HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP`)
 * asks for private targets: one label-selector target with `use_private_ip`, the balancer attached to the
 * cluster's network, the public addresses still its ingress.
 */
import { assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { lbService } from "../testing/services.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES, SERVICES } from "../kube/resources.ts";

Deno.test({
  name:
    "private-only and IPv6-only servers: Nodes with their addresses, balancer targets through the network",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    applySeed(sim, {
      networks: [{
        name: "k8s",
        ip_range: "10.0.0.0/8",
        subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
      }],
    });
    const pub = sim.addServer({ name: "pub", location: "fsn1", private_net: [{ network: "k8s" }] });
    const priv = sim.addServer({
      name: "priv",
      location: "fsn1",
      ipv4: false,
      ipv6: false,
      private_net: [{ network: "k8s" }],
    });
    const v6 = sim.addServer({
      name: "v6",
      location: "fsn1",
      ipv4: false,
      private_net: [{ network: "k8s" }],
    });
    for (const name of ["pub", "priv", "v6"]) await registerNode(client, name);
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"], {
      HCLOUD_NETWORK: "k8s",
      HCLOUD_INSTANCES_ADDRESS_FAMILY: "dualstack",
    });
    const addresses = async (name: string) =>
      ((await client.get(NODES, name)).status?.addresses ?? []).map((a) => `${a.type} ${a.address}`);
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      assertEquals(await addresses("priv"), ["Hostname priv", "InternalIP 10.0.0.3"]);
      assertEquals(await addresses("v6"), [
        "Hostname v6",
        `ExternalIP ${v6.public_net.ipv6!.ip.replace("::/64", "::1")}`,
        "InternalIP 10.0.0.4",
      ]);
      assertEquals((await addresses("pub")).filter((a) => a.startsWith("ExternalIP")).length, 2);

      await client.create(
        SERVICES,
        lbService("web", { "load-balancer.hetzner.cloud/use-private-ip": "true" }),
      );
      await eventually(
        async () =>
          ((await client.get(SERVICES, "web", { namespace: "default" })).status?.loadBalancer?.ingress ?? [])
            .length > 0,
        20_000,
      );
      const lb = [...sim.world.loadBalancers.values()][0];
      assertEquals(lb.targets.map((t) => [t.type, t.use_private_ip]), [["label_selector", true]]);
      assertEquals(lb.private_net.map((p) => p.network), [sim.world.findNetwork("k8s")!.id]);
      await eventually(() => targetServerIds(sim.world, lb).length === 3, 20_000);
      assertEquals(targetServerIds(sim.world, lb).sort(), [pub.id, priv.id, v6.id].sort());
      const ingress = (await client.get(SERVICES, "web", { namespace: "default" })).status!.loadBalancer!
        .ingress!;
      assertEquals(ingress.some((i) => i.ip === lb.public_net.ipv4.ip), true, "public ingress stays");
    } finally {
      await close(ccm);
    }
  },
});
