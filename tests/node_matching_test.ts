/**
 * Node matching and address control against a real apiserver and the simulator: FQDN Node names
 * matched to short server names (HCLOUD_INSTANCES_NODE_NAME_SUFFIX), and per-Node address overrides
 * with a Warning for an invalid one, which keeps the Node uninitialized until it is fixed.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NODES } from "../kube/resources.ts";
import { UNINITIALIZED_TAINT } from "../kube/well_known.ts";

Deno.test({
  name: "node matching: FQDN Node names by suffix; address overrides, an invalid one reported and held",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const web = s.sim.addServer({ name: "web-1", ipv4: "203.0.113.70" });
    const vpn = s.sim.addServer({ name: "vpn-1", ipv4: "203.0.113.71" });
    const bad = s.sim.addServer({ name: "bad-1", ipv4: "203.0.113.72" });
    await registerNode(client, "web-1.example.com");
    await registerNode(client, "vpn-1");
    await client.patch(NODES, "vpn-1", "merge", {
      metadata: { annotations: { "node.deno-ccm.io/internal-ip": "100.64.0.5" } },
    });
    await registerNode(client, "bad-1");
    await client.patch(NODES, "bad-1", "merge", {
      metadata: { annotations: { "node.deno-ccm.io/external-ip": "203.0.113.300" } },
    });
    const ccm = await startCcm(cluster, s.sim, ["--controllers=cloud-node"], {
      HCLOUD_INSTANCES_NODE_NAME_SUFFIX: ".example.com",
    });
    const get = (name: string) => client.get(NODES, name);
    try {
      await eventually(async () =>
        (await get("web-1.example.com")).spec?.providerID === `hcloud://${web.id}`
      );
      assertEquals((await get("web-1.example.com")).status?.addresses, [
        { type: "Hostname", address: "web-1" },
        { type: "ExternalIP", address: "203.0.113.70" },
      ]);

      await eventually(async () => (await get("vpn-1")).spec?.providerID === `hcloud://${vpn.id}`);
      assertEquals((await get("vpn-1")).status?.addresses, [
        { type: "Hostname", address: "vpn-1" },
        { type: "ExternalIP", address: "203.0.113.71" },
        { type: "InternalIP", address: "100.64.0.5" },
      ]);

      await eventually(async () =>
        (await eventsOf(client, "bad-1")).some((e) =>
          e.startsWith("Warning InvalidAddressOverride") &&
          e.includes(`node.deno-ccm.io/external-ip="203.0.113.300"`)
        )
      );
      const held = await get("bad-1");
      assert(held.spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT), "stays uninitialized");
      assertEquals(held.spec?.providerID, undefined);

      // Fixed: the Node initializes with the override.
      await client.patch(NODES, "bad-1", "merge", {
        metadata: { annotations: { "node.deno-ccm.io/external-ip": "198.51.100.72" } },
      });
      await eventually(async () => (await get("bad-1")).spec?.providerID === `hcloud://${bad.id}`, 30_000);
      assertEquals((await get("bad-1")).status?.addresses, [
        { type: "Hostname", address: "bad-1" },
        { type: "ExternalIP", address: "198.51.100.72" },
      ]);
    } finally {
      await close(ccm);
    }
  },
});
