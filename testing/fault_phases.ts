/**
 * Two phases the fault scenario runs after it converged: a hostile Service that names another
 * Service's load balancer, and a cloud that suddenly looks empty (every server gone from lists and
 * lookups) while every Node is NotReady. Each returns what it must be zero: balancers touched, Nodes
 * deleted.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { NAMESPACES, NODES, SERVICES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Simulator } from "../hcloud_sim/simulator.ts";
import { setReady } from "./ccm_harness.ts";
import { LB_ANNOTATION_PREFIX, SERVICE_UID_LABEL } from "../providers/hcloud/mod.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A Service in another namespace sets `load-balancer.hetzner.cloud/name` to the balancer of
 * `victim`, waits, and is deleted again. Returns the mutating calls its balancer received (must be 0).
 */
export async function hostileServicePhase(
  client: KubeClient,
  sim: Simulator,
  victim: string,
): Promise<number> {
  const uid = (await client.get(SERVICES, victim, { namespace: "default" })).metadata!.uid!;
  const lb = [...sim.world.loadBalancers.values()].find((x) => x.labels[SERVICE_UID_LABEL] === uid);
  if (!lb) throw new Error(`${victim} has no load balancer`);
  const before = JSON.stringify([lb.labels, lb.services, lb.targets]);
  const from = sim.audit.length;
  await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "intruder" } })
    .catch(() => {});
  await client.create<Service>(SERVICES, {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "hostile",
      namespace: "intruder",
      annotations: {
        [`${LB_ANNOTATION_PREFIX}name`]: lb.name,
        [`${LB_ANNOTATION_PREFIX}adopt-existing`]: "true",
      },
    },
    spec: { type: "LoadBalancer", selector: { app: "hostile" }, ports: [{ name: "p", port: 8443 }] },
  }, { namespace: "intruder" });
  await sleep(8_000);
  await client.delete(SERVICES, "hostile", { namespace: "intruder" });
  await sleep(8_000);
  const touched =
    sim.audit.slice(from).filter((e) => e.method !== "GET" && e.path.startsWith(`/load_balancers/${lb.id}`))
      .length;
  const still = sim.world.loadBalancers.get(lb.id);
  const changed = !still || JSON.stringify([still.labels, still.services, still.targets]) !== before;
  return touched + (changed ? 1 : 0);
}

/**
 * Every Node goes NotReady and every server disappears from the API (a token for another project,
 * a restored project) for `holdMs`; then the servers and the Nodes come back. Returns how many Nodes
 * were deleted meanwhile (must be 0).
 */
export async function emptyCloudPhase(client: KubeClient, sim: Simulator, holdMs: number): Promise<number> {
  const nodes = (await client.list(NODES)).items.map((n) => n.metadata!.name!);
  for (const name of nodes) await setReady(client, name, false);
  const restore = sim.control.vanishAllServers();
  await sleep(holdMs);
  restore();
  const left = new Set((await client.list(NODES)).items.map((n) => n.metadata!.name!));
  for (const name of nodes) if (left.has(name)) await setReady(client, name, true);
  return nodes.filter((n) => !left.has(n)).length;
}
