/**
 * The end-to-end scenario, run against whatever CCM is running (in-process, a process, a chroot):
 * three kubelet-like Nodes join with pod CIDRs, get initialized and routed, a LoadBalancer Service
 * gets its load balancer, a server disappears (its Node, route and target follow), and the Service
 * is deleted (its load balancer follows).
 *
 * @module
 */
import { assert, assertEquals } from "./assert.ts";
import type { KubeClient } from "../kube/client.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import type { Simulator } from "../hcloud_sim/simulator.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { registerNode, setReady } from "./ccm_harness.ts";
import { eventually } from "./helpers.ts";
import { hasTaint } from "../controllers/mod.ts";
import { UNINITIALIZED_TAINT } from "../kube/well_known.ts";

/** The scenario's cluster CIDR (pod CIDRs `10.244.<i>.0/24`). */
export const SCENARIO_CLUSTER_CIDR = "10.244.0.0/16";
/** Flags the CCM under test needs for the scenario. */
export const SCENARIO_ARGS = [
  `--cluster-cidr=${SCENARIO_CLUSTER_CIDR}`,
  "--node-monitor-period=1s",
  "--route-reconciliation-period=2s",
];
/** Environment besides the token and endpoint. */
export const SCENARIO_ENV = {
  HCLOUD_NETWORK: "k8s",
  HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
  HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
};

/** Seeds the simulator with the scenario's network and servers `names` (before the CCM starts). */
export function seedScenario(sim: Simulator, names = ["cp", "w1", "w2"]): void {
  applySeed(sim, {
    networks: [{
      name: "k8s",
      ip_range: "10.0.0.0/8",
      subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
    }],
    servers: names.map((name) => ({
      name,
      server_type: "cpx21",
      location: "fsn1",
      private_net: [{ network: "k8s" }],
    })),
  });
}

/**
 * Runs the scenario; throws when any step does not converge within its time. `podCidrs`: the
 * Nodes' pod CIDRs by index (IPv4 `10.244.<i>.0/24` unless given; only IPv4 ones are routed).
 */
export async function runScenario(
  client: KubeClient,
  sim: Simulator,
  timeoutMs = 60_000,
  podCidrs: (i: number) => string[] = (i) => [`10.244.${i}.0/24`],
): Promise<void> {
  const network = sim.world.findNetwork("k8s")!;
  const names = ["cp", "w1", "w2"];
  for (const [i, name] of names.entries()) {
    await registerNode(client, name, { podCIDRs: podCidrs(i) });
  }
  await eventually(
    async () =>
      (await client.list(NODES)).items.filter((n) => !hasTaint(n, UNINITIALIZED_TAINT)).length === 3,
    timeoutMs,
  );
  await eventually(
    () => network.routes.filter((r) => r.destination.startsWith("10.244.")).length === 3,
    timeoutMs,
  );
  for (const name of names) {
    await eventually(
      async () =>
        ((await client.get(NODES, name)).status?.conditions ?? []).some((c) =>
          c.type === "NetworkUnavailable" && c.status === "False"
        ),
      timeoutMs,
    );
  }

  await client.create(SERVICES, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default" },
    spec: {
      type: "LoadBalancer",
      selector: { app: "web" },
      ports: [{ name: "http", port: 80 }, { name: "https", port: 443 }],
    },
  });
  await eventually(
    async () =>
      ((await client.get(SERVICES, "web", { namespace: "default" })).status?.loadBalancer?.ingress ?? [])
        .length > 0,
    timeoutMs,
  );
  const lb = () => [...sim.world.loadBalancers.values()][0];
  assertEquals(lb()?.services.length, 2);
  await eventually(() => !!lb() && targetServerIds(sim.world, lb()).length === 3, timeoutMs);

  // The server behind w2 disappears: its Node (NotReady), route and target go too.
  const w2 = [...sim.world.servers.values()].find((s) => s.name === "w2")!;
  sim.control.deleteServer(w2.id);
  await setReady(client, "w2", false);
  await eventually(
    async () => !(await client.list(NODES)).items.some((n) => n.metadata?.name === "w2"),
    timeoutMs,
  );
  await eventually(() => !!lb() && targetServerIds(sim.world, lb()).length === 2, timeoutMs);
  await eventually(() => !network.routes.some((r) => r.destination === "10.244.2.0/24"), timeoutMs);

  await client.delete(SERVICES, "web", { namespace: "default" });
  await eventually(
    async () =>
      !(await client.list(SERVICES, { namespace: "default" })).items.some((s) => s.metadata?.name === "web"),
    timeoutMs,
  );
  assert(sim.world.loadBalancers.size === 0, "the load balancer is deleted with its Service");
}
