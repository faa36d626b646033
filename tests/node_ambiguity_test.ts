/** Nodes that all match one server are initialized as upstream does, and each is told about the others. */
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";

Deno.test({
  name: "node controller: three Nodes claiming one server each get a DuplicateProviderID warning",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const server = s.sim.addServer({ name: "shared", ipv4: "203.0.113.50" });
    for (const name of ["claim-a", "claim-b", "claim-c"]) {
      await registerNode(client, name, { nodeIp: "203.0.113.50" });
    }
    const ccm = await startCcm(cluster, s.sim, ["--controllers=cloud-node"]);
    try {
      for (const name of ["claim-a", "claim-b", "claim-c"]) {
        await eventually(
          async () =>
            (await eventsOf(client, name)).some((e) =>
              e.startsWith("Warning DuplicateProviderID") && e.includes(`hcloud://${server.id}`) &&
              e.includes("claim-a, claim-b, claim-c")
            ),
          15_000,
        );
      }
    } finally {
      await close(ccm);
    }
  },
});
