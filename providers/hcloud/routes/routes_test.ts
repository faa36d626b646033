/** The hcloud routes against the simulator: the network's route limit reaches the controller typed. */
import { assert, assertEquals, assertRejects } from "../../../testing/assert.ts";
import { K8S_NETWORK, startTestSim } from "../../../testing/sim_harness.ts";
import { applySeed } from "../../../hcloud_sim/control.ts";
import { providerOnSim } from "../../../testing/provider_on_sim.ts";
import { LimitReachedError, rootCause, TerminalError } from "../../errors.ts";
import { sweepLostAnswers } from "../../../testing/lost_answers.ts";

Deno.test("hcloud routes: a full network is a LimitReachedError naming it; a Node outside it is terminal", async () => {
  const t = await startTestSim({ actionDurationMs: 0, networkLimits: { routes: 1 } });
  try {
    applySeed(t.sim, K8S_NETWORK);
    const provider = await providerOnSim(t, { HCLOUD_NETWORK: "k8s" });
    const routes = provider.routes!;
    assertEquals(routes.maxRoutes, 100, "Hetzner's documented limit");
    const [a, b] = ["a", "b"].map((name) => t.sim.addServer({ name, private_net: [{ network: "k8s" }] }));
    const route = (name: string, ip: string, cidr: string) => ({
      name: "",
      targetNode: name,
      targetNodeAddresses: [{ type: "InternalIP", address: ip }],
      destinationCIDR: cidr,
    });
    await routes.listRoutes("k");
    await routes.createRoute("k", "a", route("a", a.private_net[0].ip!, "10.244.0.0/24"));
    const full = await assertRejects(
      () => routes.createRoute("k", "b", route("b", b.private_net[0].ip!, "10.244.1.0/24")),
      Error,
    );
    assert(rootCause(full) instanceof LimitReachedError, `${full.name}: ${full.message}`);
    assertEquals(full.message, "the cloud holds no more routes in network k8s (its limit is 100)");
    // A Node whose server is not in the network (a full network refuses servers too) cannot be a
    // gateway until its addresses change: retrying is pointless.
    const outside = await assertRejects(
      () => routes.createRoute("k", "c", route("c", "192.168.1.5", "10.244.2.0/24")),
      Error,
    );
    assert(rootCause(outside) instanceof TerminalError, outside.message);
    assert(/has no InternalIP in network k8s .* at most 100 servers/.test(outside.message), outside.message);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud routes: a gateway the last server list does not know is placed from a fresh read, never left ownerless (N8)", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    applySeed(t.sim, K8S_NETWORK);
    const provider = await providerOnSim(t, { HCLOUD_NETWORK: "k8s" });
    const routes = provider.routes!;
    const ours = t.sim.addServer({ name: "ours", private_net: [{ network: "k8s" }] });
    await provider.context.cache.get(); // the snapshot: it knows "ours" only
    // Another cluster's server in the same Network, put in as the probe did (no action names it),
    // and its route inside our cluster CIDR; and a stale route through an address nobody holds.
    const other = t.sim.addServer({ name: "other-cluster-1", private_net: [{ network: "k8s" }] });
    const network = [...t.sim.world.networks.values()][0];
    for (
      const [destination, gateway] of [["10.244.9.0/24", other.private_net[0].ip!], [
        "10.244.8.0/24",
        "10.0.9.9",
      ]]
    ) {
      const added = await t.api("POST", `/networks/${network.id}/actions/add_route`, {
        destination,
        gateway,
      });
      assertEquals(added.status < 300, true, JSON.stringify(added.body));
    }
    const before = t.sim.audit.length;
    const listed = await routes.listRoutes("k");
    const byDestination = new Map(listed.map((r) => [r.destinationCIDR, r.gatewayProviderID]));
    assertEquals(
      byDestination.get("10.244.9.0/24"),
      `hcloud://${other.id}`,
      "its owner is known: never ours to delete",
    );
    assertEquals(
      byDestination.get("10.244.8.0/24"),
      undefined,
      "no attached server holds it: stale on a fresh answer",
    );
    assertEquals(
      t.sim.audit.slice(before).map((e) => e.route),
      ["GET /networks/{id}", "GET /servers/{id}"],
      "one read of the one server the list did not know",
    );
    assert(ours.id !== other.id);
    // The next passes read the Network only: a route through another cluster's server costs one read.
    const again = t.sim.audit.length;
    await routes.listRoutes("k");
    await routes.listRoutes("k");
    assertEquals(
      t.sim.audit.slice(again).map((e) => e.route),
      ["GET /networks/{id}", "GET /networks/{id}"],
      "the read that placed the gateway is kept",
    );
    // A server the list does not know that holds no gateway, and a route through an address nobody
    // holds outside the cluster (a vSwitch gateway): read once for it, not at every pass (explorer
    // seed 5858 of workload 1); a gateway new since is read for again, as a deletion would rest on it.
    t.sim.addServer({ name: "other-cluster-2", private_net: [{ network: "k8s" }] });
    const viaVswitch = await t.api("POST", `/networks/${network.id}/actions/add_route`, {
      destination: "10.99.0.0/16",
      gateway: "10.0.255.1",
    });
    assertEquals(viaVswitch.status < 300, true, JSON.stringify(viaVswitch.body));
    const reads = async () => {
      const from = t.sim.audit.length;
      await routes.listRoutes("k");
      return t.sim.audit.slice(from).map((e) => e.route);
    };
    // The stale route's gateway is still unplaced, so the servers the list does not know are read.
    assertEquals(await reads(), ["GET /networks/{id}", "GET /servers/{id}"], "the new server, once");
    assertEquals(await reads(), ["GET /networks/{id}"], "nothing new: no read");
    assertEquals(await reads(), ["GET /networks/{id}"], "nor at the next pass");
    const another = await t.api("POST", `/networks/${network.id}/actions/add_route`, {
      destination: "10.98.0.0/16",
      gateway: "10.0.255.2",
    });
    assertEquals(another.status < 300, true, JSON.stringify(another.body));
    assertEquals(
      await reads(),
      ["GET /networks/{id}", "GET /servers/{id}"],
      "a new unplaced gateway: the server that placed none is read for it",
    );
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud routes: every route write, applied with its answer lost, converges on the reference's routes", async () => {
  const world = async () => {
    const t = await startTestSim({ actionDurationMs: 0 });
    applySeed(t.sim, K8S_NETWORK);
    const provider = await providerOnSim(t, { HCLOUD_NETWORK: "k8s" });
    const routes = provider.routes!;
    const [a, b] = ["a", "b"].map((name) => t.sim.addServer({ name, private_net: [{ network: "k8s" }] }));
    const route = (name: string, ip: string, cidr: string) => ({
      name: `${ip}-${cidr}`,
      targetNode: name,
      targetNodeAddresses: [{ type: "InternalIP", address: ip }],
      destinationCIDR: cidr,
    });
    const ra = route("a", a.private_net[0].ip!, "10.244.0.0/24");
    const rb = route("b", b.private_net[0].ip!, "10.244.1.0/24");
    return {
      t,
      steps: [
        async () => (await routes.listRoutes("k")).length,
        () => routes.createRoute("k", "a", ra),
        () => routes.createRoute("k", "b", rb),
        () => routes.deleteRoute("k", ra),
      ],
    };
  };
  const { writes } = await sweepLostAnswers(
    world,
    (t) =>
      [...t.sim.world.networks.values()].map((n) => n.routes.map((r) => `${r.destination} via ${r.gateway}`)),
  );
  assertEquals(writes.filter((w) => w.includes("route")).length, 3, writes.join(", "));
});
