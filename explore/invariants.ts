/**
 * What must hold of an explored cluster after every step (safety), each a harm a user would see:
 * - `one-balancer-per-service`: never two balancers for one Service UID or one share key (double
 *   cost, two IPs).
 * - `live-balancer-kept`: the balancer of a Service that stayed a LoadBalancer is never deleted or
 *   replaced (a new public IP for every client).
 * - `node-deleted-with-server`: no Node deleted by the CCM while its server exists (pods evicted
 *   from a running machine).
 * - `foreign-untouched`: another cluster's balancer, a route the CCM did not make, a server that is
 *   no Node and the operator's own rule in the balancers' firewall stay as they were.
 * - `no-firewall-applied`: the CCM applies no firewall to a server.
 * - `one-leader-writes`: with two replicas, a replica writes (to the cloud or Kubernetes) only while
 *   the lease names it: never two leaders writing.
 *
 * Liveness, once faults stop, is liveness.ts.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { SERVICE_UID_LABEL, SHARE_LABEL } from "../providers/hcloud/mod.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import type { LoadBalancer } from "../hcloud_sim/world.ts";
import { type ExploreCluster, FIREWALL } from "./cluster.ts";
import { serverId, SHARE_ANNOTATION, type WorkloadMemory } from "./workload.ts";

/** One broken property. */
export interface Violation {
  /** The property broken (see the module doc). */
  property: string;
  /** What was seen. */
  detail: string;
}

/** The route of another owner seeded in the network. */
const FOREIGN_ROUTE = { destination: "10.99.0.0/16", gateway: "10.0.255.1" };
/** A rule of the operator's in the balancers' firewall: the CCM keeps it as it is. */
const OPERATOR_RULE = {
  direction: "in",
  protocol: "tcp",
  port: "22",
  source_ips: ["203.0.113.0/24"],
  description: "office ssh",
};

/** Calls the simulator's API in-process, as another tool in the project would. */
async function call(c: ExploreCluster, path: string, body: unknown): Promise<unknown> {
  const answer = await c.sim.handle(
    new Request(`http://sim.invalid/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEFAULT_SIM_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  return await answer.json();
}

/**
 * Seeds what the CCM must leave alone: another cluster's balancer, a foreign route, a bare server,
 * and the balancers' firewall with a rule of the operator's own.
 */
export async function seedForeign(c: ExploreCluster): Promise<void> {
  const network = [...c.sim.world.networks.values()][0];
  network.routes.push({ ...FOREIGN_ROUTE });
  c.sim.control.createServer({ name: "bastion", location: "nbg1", labels: { role: "bastion" } });
  const made = await call(c, "/load_balancers", {
    name: "other-cluster-ingress",
    load_balancer_type: "lb11",
    location: "nbg1",
    labels: { [SERVICE_UID_LABEL]: "uid-of-another-cluster" },
  }) as { load_balancer: { id: number } };
  c.foreignBalancer = made.load_balancer.id;
  await call(c, "/firewalls", { name: FIREWALL, rules: [OPERATOR_RULE] });
}

/** The balancers' firewall, if it exists. */
export function firewall(
  c: ExploreCluster,
): { rules: { description?: string | null; source_ips: string[] }[] } | undefined {
  return [...c.sim.world.firewalls.values()].find((f) => f.name === FIREWALL) as
    | { rules: { description?: string | null; source_ips: string[] }[] }
    | undefined;
}

/** A Service's balancer: its own (by UID label), or the shared one recording its first port as its. */
export function balancerOf(c: ExploreCluster, s: Service): LoadBalancer | undefined {
  const shared = s.metadata?.annotations?.[SHARE_ANNOTATION] !== undefined;
  const port = s.spec?.ports?.[0]?.port;
  return [...c.sim.world.loadBalancers.values()].find((lb) =>
    lb.id !== c.foreignBalancer &&
    (shared
      ? lb.labels[SHARE_LABEL] !== undefined && lb.labels[`deno-ccm/port-${port}`] === s.metadata?.name
      : lb.labels[SERVICE_UID_LABEL] === s.metadata?.uid)
  );
}

/** Services of type LoadBalancer not being deleted, by UID. */
export function liveServices(c: ExploreCluster): Map<string, Service> {
  return new Map(
    c.apiserver.objects<Service>("services")
      .filter((s) => s.spec?.type === "LoadBalancer" && !s.metadata?.deletionTimestamp)
      .map((s) => [s.metadata!.uid!, s]),
  );
}

/** What the foreign objects look like (compared after every step). */
function foreign(c: ExploreCluster): string {
  const network = [...c.sim.world.networks.values()][0];
  const bastion = [...c.sim.world.servers.values()].find((s) => s.name === "bastion");
  return JSON.stringify({
    route: network.routes.filter((r) => r.destination === FOREIGN_ROUTE.destination),
    bastion: bastion && { labels: bastion.labels, status: bastion.status },
    balancer: c.sim.world.loadBalancers.get(c.foreignBalancer),
    rules: firewall(c)?.rules.filter((r) => r.description === OPERATOR_RULE.description),
  });
}

/** The safety checker of one run: it remembers the previous step's view. */
export class Safety {
  #balancerOf = new Map<string, number>();
  #nodes = new Map<string, { name: string; id: number | undefined }>();
  #foreign?: string;

  constructor(private readonly c: ExploreCluster, private readonly memory: WorkloadMemory) {}

  /** The violations after the step just done. */
  check(): Violation[] {
    const out: Violation[] = [];
    const c = this.c;
    this.#foreign ??= foreign(c);
    for (const detail of c.leaderless.splice(0)) out.push({ property: "one-leader-writes", detail });
    const owners = new Map<string, number[]>();
    for (const lb of c.sim.world.loadBalancers.values()) {
      if (lb.id === c.foreignBalancer) continue;
      const uid = lb.labels?.[SERVICE_UID_LABEL];
      const share = lb.labels?.[SHARE_LABEL];
      const owner = uid ? `Service ${uid}` : share ? `share key ${share}` : undefined;
      if (owner) owners.set(owner, [...owners.get(owner) ?? [], lb.id]);
    }
    for (const [owner, ids] of owners) {
      if (ids.length > 1) {
        out.push({ property: "one-balancer-per-service", detail: `${owner}: balancers ${ids.join(", ")}` });
      }
    }
    const live = liveServices(c);
    for (const [uid, id] of this.#balancerOf) {
      const service = live.get(uid);
      if (!service || this.memory.interrupted.has(uid) || c.sim.world.loadBalancers.has(id)) continue;
      out.push({
        property: "live-balancer-kept",
        detail: `${service.metadata!.name} (${uid}) lost its balancer ${id}; now ${
          balancerOf(c, service)?.id
        }`,
      });
    }
    this.#balancerOf.clear();
    for (const [uid, service] of live) {
      const lb = balancerOf(c, service);
      if (lb) this.#balancerOf.set(uid, lb.id);
    }
    // By UID: a Node deleted and registered again under its name is another Node. One without a
    // provider ID yet is its name's server's (the node controller matches it by name).
    const byName = new Map([...c.sim.world.servers.values()].map((s) => [s.name, s.id]));
    const nodes = new Map(
      c.apiserver.objects<Node>("nodes").map((n) => [
        n.metadata!.uid!,
        { name: n.metadata!.name!, id: serverId(n) ?? byName.get(n.metadata!.name!) },
      ]),
    );
    for (const [uid, { name, id }] of this.#nodes) {
      if (nodes.has(uid) || this.memory.deletedNodes.has(uid) || id === undefined) continue;
      const server = c.sim.world.servers.get(id);
      if (server) {
        out.push({
          property: "node-deleted-with-server",
          detail: `${name} (${uid}) deleted; server ${id} is ${server.status}`,
        });
      }
    }
    this.#nodes = nodes;
    if (foreign(c) !== this.#foreign) {
      out.push({ property: "foreign-untouched", detail: `now ${foreign(c)}; was ${this.#foreign}` });
    }
    for (const fw of c.sim.world.firewalls.values()) {
      const applied = (fw as { applied_to?: { type: string }[] }).applied_to ?? [];
      if (applied.some((a) => a.type === "server")) {
        out.push({ property: "no-firewall-applied", detail: `firewall ${fw.id} applied to a server` });
      }
    }
    return out;
  }
}
