/**
 * Topology labels that mean something (`HCLOUD_INSTANCES_TOPOLOGY=location`) against a real apiserver:
 * a new Node gets zone = its server's location and region = the location's network zone; the default
 * keeps the official CCM's (the old datacenter name, and the location).
 */
import { assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { NODES } from "../kube/resources.ts";

Deno.test({
  name:
    "topology: the location topology labels new Nodes by location and network zone; the default is the official CCM's",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "legacy", location: "fsn1" });
    sim.addServer({ name: "located", location: "hel1" });
    const labels = async (name: string) => {
      const l = (await client.get(NODES, name)).metadata?.labels ?? {};
      return [l["topology.kubernetes.io/zone"], l["topology.kubernetes.io/region"]];
    };
    let ccm = await startCcm(cluster, sim, ["--controllers=cloud-node"]);
    try {
      await registerNode(client, "legacy");
      await eventually(async () => !!(await client.get(NODES, "legacy")).spec?.providerID, 20_000);
      assertEquals(await labels("legacy"), ["fsn1-dc14", "fsn1"]);
      await ccm.stop();
      ccm = await startCcm(cluster, sim, ["--controllers=cloud-node"], {
        HCLOUD_INSTANCES_TOPOLOGY: "location",
      });
      await registerNode(client, "located");
      await eventually(async () => !!(await client.get(NODES, "located")).spec?.providerID, 20_000);
      assertEquals(await labels("located"), ["hel1", "eu-central"]);
      assertEquals(await labels("legacy"), ["fsn1-dc14", "fsn1"], "a Node that exists keeps its labels");
    } finally {
      await close(ccm);
    }
  },
});
