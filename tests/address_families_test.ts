/**
 * The end-to-end scenario with `HCLOUD_INSTANCES_ADDRESS_FAMILY=ipv6` and `dualstack`, a dual-stack
 * `--cluster-cidr` and Nodes with an IPv4 and an IPv6 pod CIDR, against the apiserver and the
 * simulator: Nodes carry the addresses of the family asked for (the official CCM's list), the IPv4
 * pod CIDRs are routed and the IPv6 ones said to be skipped (Hetzner routes are IPv4 only), the
 * balancer serves, a vanished server's Node and route go.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { runScenario, SCENARIO_ARGS, SCENARIO_ENV, seedScenario } from "../testing/e2e_scenario.ts";
import { EVENTS, NODES } from "../kube/resources.ts";

const DUAL_CIDR = "--cluster-cidr=10.244.0.0/16,fd00:10:244::/56";

for (const family of ["ipv6", "dualstack"] as const) {
  Deno.test({
    name: `address families: the end-to-end scenario with ${family} addresses and dual-stack pod CIDRs`,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const { cluster, s, client, close } = await testEnvironment();
      seedScenario(s.sim);
      const args = SCENARIO_ARGS.filter((a) => !a.startsWith("--cluster-cidr=")).concat(DUAL_CIDR);
      const ccm = await startCcm(cluster, s.sim, args, {
        ...SCENARIO_ENV,
        HCLOUD_INSTANCES_ADDRESS_FAMILY: family,
      });
      try {
        await runScenario(
          client,
          s.sim,
          60_000,
          (i) => [`10.244.${i}.0/24`, i ? `fd00:10:244:${i}::/64` : "fd00:10:244::/64"],
        );
        const server = [...s.sim.world.servers.values()].find((x) => x.name === "cp")!;
        const v6 = server.public_net.ipv6!.ip.replace("::/64", "::1");
        const cp = await client.get(NODES, "cp");
        const internal = server.private_net[0].ip;
        assertEquals(
          cp.status?.addresses,
          [
            { type: "Hostname", address: "cp" },
            ...family === "dualstack" ? [{ type: "ExternalIP", address: server.public_net.ipv4!.ip }] : [],
            { type: "ExternalIP", address: v6 },
            { type: "InternalIP", address: internal },
          ],
          `${family} addresses`,
        );
        const routes = s.sim.world.findNetwork("k8s")!.routes.map((r) => r.destination).sort();
        assertEquals(routes, ["10.244.0.0/24", "10.244.1.0/24"], "the IPv4 pod CIDRs of the Nodes left");
        const skipped = (await client.list(EVENTS, { namespace: "default" })).items.filter((e) =>
          e.reason === "IPv6RouteSkipped" && e.involvedObject?.name === "cp"
        );
        assert(skipped.length === 1, "the IPv6 pod CIDR is said to be skipped (one event, counted)");
        assert(skipped[0].message?.includes("fd00:10:244::/64"), skipped[0].message);
        assertEquals(
          (cp.status?.conditions ?? []).find((c) => c.type === "NetworkUnavailable")?.status,
          "False",
          "routed: the IPv4 route is all Hetzner can give",
        );
        const w1: Node = await client.get(NODES, "w1");
        assertEquals(w1.spec?.podCIDRs, ["10.244.1.0/24", "fd00:10:244:1::/64"]);
      } finally {
        await ccm.stop();
        await close();
      }
    },
  });
}
