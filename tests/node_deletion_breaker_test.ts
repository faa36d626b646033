/**
 * A cloud that suddenly looks empty deletes no Node: when the servers of too many NotReady Nodes
 * vanish at once, deletions are held (event, metric, log) until the cloud answers plausibly again
 * or an operator confirms a Node; a single vanished server is still deleted as upstream does.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { registerNode, setReady, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NODES } from "../kube/resources.ts";
import { CONFIRM_DELETION } from "../controllers/mod.ts";

Deno.test({
  name: "node lifecycle: servers of 4 of 5 Nodes vanish at once → no deletion until confirmed or plausible",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { s, client, servers, names, held, stop } = await breakerEnvironment("b", 5);
    try {
      for (const server of servers) await setReady(client, server.name, false);
      const gone = servers.slice(0, 4);
      for (const server of gone) s.sim.control.vanishServer(server.id);

      await eventually(() => held() === 4, 10_000);
      await new Promise((r) => setTimeout(r, 2_000));
      assertEquals(await names(), ["b-0", "b-1", "b-2", "b-3", "b-4"], "nothing deleted while held");
      assertEquals(
        (await eventsOf(client, "b-0")).some((e) =>
          e.startsWith("Warning NodeDeletionHeld") && e.includes("4 of 5")
        ),
        true,
      );

      // An operator confirms one Node: only that one goes.
      await client.patch(NODES, "b-0", "merge", {
        metadata: { annotations: { [CONFIRM_DELETION]: "true" } },
      });
      await eventually(async () => !(await names()).includes("b-0"), 10_000);
      assertEquals(await names(), ["b-1", "b-2", "b-3", "b-4"]);

      // The cloud answers plausibly again (the servers were there all along): nothing is held.
      for (const server of gone.slice(1)) s.sim.control.restoreServer(server);
      await eventually(() => held() === 0, 10_000);

      // One vanished server among four Nodes is deleted, as upstream does.
      s.sim.control.vanishServer(servers[4].id);
      await eventually(async () => !(await names()).includes("b-4"), 10_000);
      assertEquals(await names(), ["b-1", "b-2", "b-3"]);
    } finally {
      await stop();
    }
  },
});

Deno.test({
  name: "node lifecycle: a provider ID beyond 2^53 is never rounded to another server, never deleted",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    await registerNode(client, "huge", { providerID: "hcloud://9007199254740993" });
    await setReady(client, "huge", false);
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node,cloud-node-lifecycle",
      "--node-monitor-period=500ms",
    ]);
    try {
      await eventually(async () =>
        (await eventsOf(client, "huge")).some((e) =>
          e.startsWith("Warning UnsupportedNode") && e.includes("beyond the IDs this CCM can address exactly")
        )
      );
      await new Promise((r) => setTimeout(r, 2_000));
      assertEquals((await client.get<Node>(NODES, "huge")).spec?.providerID, "hcloud://9007199254740993");
      assertEquals(s.sim.count(/^GET \/servers\/\{id\}$/), 0, "no lookup of a rounded ID");
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name:
    "node lifecycle: soon after a legitimate deletion, a minority going NotReady on an emptied cloud is held (probe P8)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { s, client, servers, names, held, stop } = await breakerEnvironment("p", 6);
    try {
      for (const server of servers) await setReady(client, server.name, true);
      // A legitimate deletion: the cloud is asked about and believed.
      await setReady(client, "p-5", false);
      s.sim.control.vanishServer(servers[5].id);
      await eventually(async () => !(await names()).includes("p-5"), 10_000);
      // Seconds later (the probe: 15 s, under the old 30 s belief) the cloud turns empty and two of
      // five go NotReady: a minority, which the old belief let through.
      for (const server of servers.slice(0, 5)) s.sim.control.vanishServer(server.id);
      for (const name of ["p-3", "p-4"]) await setReady(client, name, false);
      await eventually(() => held() === 2, 10_000);
      await new Promise((r) => setTimeout(r, 2_000));
      assertEquals(await names(), ["p-0", "p-1", "p-2", "p-3", "p-4"], "nothing deleted on an old answer");
    } finally {
      await stop();
    }
  },
});

/** `count` servers and their Nodes (`<prefix>-<i>`), initialized by a CCM running node and lifecycle controllers. */
async function breakerEnvironment(prefix: string, count: number) {
  const { cluster, s, client, close } = await testEnvironment();
  const servers = Array.from({ length: count }, (_, i) => s.sim.addServer({ name: `${prefix}-${i}` }));
  for (const server of servers) await registerNode(client, server.name);
  const ccm = await startCcm(cluster, s.sim, [
    "--controllers=cloud-node,cloud-node-lifecycle",
    "--node-monitor-period=500ms",
  ], { HCLOUD_SERVER_CACHE_MAX_AGE: "500ms" });
  const stop = async () => {
    await close(ccm);
  };
  try {
    await eventually(async () =>
      (await client.list<Node>(NODES)).items.every((n) => n.spec?.providerID?.startsWith("hcloud://"))
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    s,
    client,
    servers,
    stop,
    names: async () => (await client.list<Node>(NODES)).items.map((n) => n.metadata!.name!).sort(),
    held: () => ccm.registry.gauge("node_lifecycle_deletions_held", "").get(),
  };
}
