/**
 * What must hold once faults stop and the cluster has had time to settle (the calm, then ten
 * simulated minutes): every LoadBalancer Service has its balancer and its ingress; each balancer's
 * targets are the eligible Nodes' servers; no balancer outlives its Services; the firewall lets in
 * exactly the balancers that reach their targets over public addresses; the routes are the Nodes'
 * pod ranges.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { SERVICE_UID_LABEL, SHARE_LABEL } from "../providers/hcloud/mod.ts";
import { CLUSTER_ID, type ExploreCluster } from "./cluster.ts";
import { balancerOf, firewall, liveServices, type Violation } from "./invariants.ts";
import { AUTOSCALER_TAINT, EXCLUDE_LABEL, serverId, SHARE_ANNOTATION } from "./workload.ts";

/** The annotation of a balancer that targets only the Nodes whose labels match. */
const NODE_SELECTOR_ANNOTATION = "load-balancer.hetzner.cloud/node-selector";

/** The description of the firewall rules the CCM keeps for this cluster's balancers. */
const MARKER = `deno-ccm ${CLUSTER_ID}: load balancers to the ports they send to`;

/** The liveness violations. */
export function liveness(c: ExploreCluster): Violation[] {
  const out: Violation[] = [];
  const live = liveServices(c);
  const ours = [...c.sim.world.loadBalancers.values()].filter((lb) => lb.id !== c.foreignBalancer);
  const all = c.apiserver.objects<Node>("nodes");
  const nodes = all.filter((n) =>
    n.metadata?.labels?.[EXCLUDE_LABEL] === undefined && !n.metadata?.deletionTimestamp &&
    !(n.spec?.taints ?? []).some((t) => t.key === AUTOSCALER_TAINT)
  );
  for (const s of live.values()) {
    // A node selector (`key=value`, as the workload writes it) narrows the eligible Nodes.
    const selector = s.metadata?.annotations?.[NODE_SELECTOR_ANNOTATION]?.split("=");
    const eligible = [
      ...new Set(
        nodes.filter((n) => !selector || n.metadata?.labels?.[selector[0]] === selector[1])
          .map(serverId)
          .filter((id): id is number => id !== undefined && c.sim.world.servers.has(id)),
      ),
    ].sort().join(",");
    const lb = balancerOf(c, s);
    const name = s.metadata!.name;
    if (!lb) {
      out.push({ property: "liveness-balancer", detail: `${name} has no balancer` });
      continue;
    }
    const ingress = s.status?.loadBalancer?.ingress ?? [];
    if (!ingress.some((i) => i.ip === lb.public_net.ipv4?.ip)) {
      out.push({ property: "liveness-ingress", detail: `${name}: ingress ${JSON.stringify(ingress)}` });
    }
    // An asked setting changed by hand is put back by drift repair (within its 10-minute period); an
    // unasked one is left as its changer set it, as HCCM leaves it.
    const algorithm = s.metadata?.annotations?.["load-balancer.hetzner.cloud/algorithm-type"];
    if (!shared(s) && algorithm && lb.algorithm.type !== algorithm) {
      out.push({
        property: "liveness-settings",
        detail: `${name}: algorithm ${lb.algorithm.type}, asked ${algorithm}`,
      });
    }
    const have = [...resolvedTargets(c, lb.targets)].sort().join(",");
    if (have !== eligible) {
      out.push({
        property: "liveness-targets",
        detail: `${name}: targets [${have}], eligible [${eligible}]`,
      });
    }
  }
  const served = new Set([...live.values()].map((s) => balancerOf(c, s)?.id));
  for (const lb of ours) {
    if ((lb.labels[SERVICE_UID_LABEL] || lb.labels[SHARE_LABEL]) && !served.has(lb.id)) {
      out.push({
        property: "liveness-leak",
        detail: `balancer ${lb.id} (${lb.name}) serves no live Service`,
      });
    }
  }
  const letIn = [
    ...new Set(
      (firewall(c)?.rules ?? []).filter((r) => r.description === MARKER).flatMap((r) => r.source_ips),
    ),
  ].sort().join(",");
  // Only balancers that reach their targets over public addresses need the firewall.
  const balancers = ours.filter((lb) => served.has(lb.id) && lb.targets.some((t) => !t.use_private_ip))
    .map((lb) => `${lb.public_net.ipv4?.ip}/32`).sort()
    .join(",");
  if (letIn !== balancers) {
    out.push({ property: "liveness-firewall", detail: `rules let in [${letIn}], balancers [${balancers}]` });
  }
  out.push(...routes(c, all));
  return out;
}

/** Whether the Service is on a shared balancer (its settings are the first member's). */
function shared(s: Service): boolean {
  return s.metadata?.annotations?.[SHARE_ANNOTATION] !== undefined;
}

/** The routes inside the cluster CIDR against the Nodes' pod ranges. */
function routes(c: ExploreCluster, nodes: Node[]): Violation[] {
  const network = [...c.sim.world.networks.values()][0];
  // Nodes whose servers all vanished at once are held by the deletion breaker until the cloud is
  // believed again or an operator confirms (design notes: the lifecycle breaker): their routes stay.
  if (c.gauge("node_lifecycle_deletions_held") > 0) {
    c.reached("Node deletions held by the breaker");
    return [];
  }
  const want = nodes.flatMap((n) => {
    const id = serverId(n);
    const server = id === undefined ? undefined : c.sim.world.servers.get(id);
    const ip = server?.private_net.find((p) => p.network === network.id)?.ip;
    return ip && n.spec?.podCIDR ? [`${n.spec.podCIDR}->${ip}`] : [];
  }).sort();
  const have = network.routes.filter((r) => r.destination.startsWith("10.244."))
    .map((r) => `${r.destination}->${r.gateway}`).sort();
  // A route through a machine whose Node left while no CCM watched (a crash right after the
  // deletion) is, to the next CCM, another cluster's in the same network (route.ts, probe N8): left,
  // and counted as foreign. Accepted when the CCM says so; any other extra route is a leak.
  const extra = have.filter((r) => !want.includes(r));
  const missing = want.filter((r) => !have.includes(r));
  const foreign = c.gauge("route_foreign_routes"); // inside the cluster CIDR only: not the seeded one
  if (missing.length || extra.length > foreign) {
    return [{
      property: "liveness-routes",
      detail: `routes [${have}], Nodes [${want}], counted foreign: ${foreign}`,
    }];
  }
  if (extra.length) c.reached("route left by a Node deleted while no CCM watched");
  return [];
}

/** The servers a balancer's targets name: server targets, and the servers a label selector matches. */
function resolvedTargets(
  c: ExploreCluster,
  targets: { type: string; server?: { id: number }; label_selector?: { selector: string } }[],
): Set<number> {
  const out = new Set<number>();
  for (const t of targets) {
    if (t.type === "server" && t.server) out.add(t.server.id);
    if (t.type !== "label_selector" || !t.label_selector) continue;
    // The CCM's selectors are `key=value` terms joined by commas (providers/hcloud/servers/labeler.ts).
    const terms = t.label_selector.selector.split(",").map((term) => term.split("="));
    for (const server of c.sim.world.servers.values()) {
      if (terms.every(([k, v]) => server.labels[k] === v)) out.add(server.id);
    }
  }
  return out;
}
