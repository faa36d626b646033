/**
 * A Service balancer's targets: this cluster's label selector (one target for every eligible
 * server), servers one by one (node selectors, or before the cluster identity is known), and Robot
 * Nodes' IPs. Each step applies only what differs and says whether it changed anything; a full
 * balancer is a `MaxTargetsReached` warning on the Node that did not fit.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { ProviderWarning } from "../../../provider.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import type { ActionWaiter, HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import { parseLabelSelector } from "../../../../lib/label_selector.ts";
import { reconcileIpTargets, type RobotTargetContext, robotTargetIps } from "./robot_targets.ts";
import { parseProviderId } from "../../provider_id.ts";
import { type LbAction, planLabelTarget, planServerTargets } from "../core/plan.ts";
import { executeLbAction } from "../core/actions.ts";

/** See the module doc. */
export class LbTargets {
  readonly #client: HcloudClient;
  readonly #waiter: ActionWaiter;
  readonly #robot: RobotTargetContext;
  /** IP targets last applied per balancer name: a node-set change that leaves them alone costs nothing. */
  readonly appliedIps = new Map<string, string>();

  /** Targets written through `client`, their actions awaited by `waiter`; Robot Nodes per `robot`. */
  constructor(client: HcloudClient, waiter: ActionWaiter, robot: RobotTargetContext) {
    this.#client = client;
    this.#waiter = waiter;
    this.#robot = robot;
  }

  /**
   * One label-selector target: added first, then every other target (server targets of the
   * official CCM, say) removed, so traffic never loses its backends while migrating.
   */
  async label(lb: Schemas["load_balancer"], selector: string, usePrivateIp: boolean): Promise<boolean> {
    const actions = planLabelTarget(lb, selector, usePrivateIp);
    for (const action of actions) await executeLbAction(this.#client, this.#waiter, lb.id, action);
    return actions.length > 0;
  }

  /**
   * Label-selector balancers: Robot Nodes' IP targets follow the node set; no call when they are
   * what was applied last. `find` looks the balancer up only when something is to change.
   */
  async robotIfChanged(
    name: string,
    spec: LoadBalancerSpec,
    nodes: Node[],
    warnings: ProviderWarning[],
    find: () => Promise<Schemas["load_balancer"] | undefined>,
  ): Promise<boolean> {
    if (!this.#robot.enabled) return false;
    const robotTargets = await robotTargetIps(selectedNodes(nodes, spec), spec.usePrivateIp, this.#robot);
    warnings.push(...robotTargets.warnings);
    if (this.appliedIps.get(name) === [...robotTargets.ips.keys()].sort().join(",")) return false;
    const lb = await find();
    if (!lb) return false;
    return await this.ips(lb, robotTargets.ips, warnings);
  }

  /** IP targets: Robot Nodes' added, others removed (see robot_targets.ts). */
  ips(
    lb: Schemas["load_balancer"],
    wanted: Map<string, string>,
    warnings: ProviderWarning[],
  ): Promise<boolean> {
    const act = (action: LbAction) => executeLbAction(this.#client, this.#waiter, lb.id, action);
    return reconcileIpTargets(lb, wanted, warnings, {
      remove: (ip) => act({ kind: "remove_target", target: { type: "ip", ip: { ip } } }),
      add: (ip) => act({ kind: "add_target", target: { type: "ip", ip: { ip }, use_private_ip: false } }),
      applied: (ips) => this.appliedIps.set(lb.name, ips),
    });
  }

  /** Server targets: removes foreign and stale ones (or ones with the wrong private-IP flag), adds missing ones. */
  async servers(
    lb: Schemas["load_balancer"],
    ids: number[],
    spec: LoadBalancerSpec,
    warnings: ProviderWarning[],
    nodes: Node[],
  ): Promise<boolean> {
    const nodeOf = (id: number) =>
      nodes.find((n) => {
        const p = parseProviderId(n.spec?.providerID);
        return p.kind === "cloud" && p.id === id;
      })?.metadata?.name;
    const max = lb.load_balancer_type?.max_targets ?? Infinity;
    // What stays counts against the type's limit; each add is checked against it as it goes.
    let count = (lb.targets ?? []).filter((t) => t.type === "server").length;
    let changed = false;
    for (const action of planServerTargets(lb, ids, spec.usePrivateIp)) {
      if (action.kind === "remove_target") {
        await executeLbAction(this.#client, this.#waiter, lb.id, action);
        if (action.target.type === "server") count--;
        changed = true;
        continue;
      }
      const id = action.kind === "add_target" && action.target.type === "server"
        ? action.target.server.id
        : -1;
      if (count >= max) {
        warnings.push({
          reason: "MaxTargetsReached",
          message: `load balancer ${lb.name} (type ${lb.load_balancer_type?.name}) allows ${max} targets; ` +
            `server ${id} not added`,
          node: nodeOf(id),
        });
        continue;
      }
      try {
        await executeLbAction(this.#client, this.#waiter, lb.id, action);
        count++;
        changed = true;
      } catch (err) {
        if (!(err instanceof CloudApiError && err.code === "resource_limit_exceeded")) throw err;
        warnings.push({
          reason: "MaxTargetsReached",
          message: `load balancer ${lb.name}: server ${id} not added: ${err.message}`,
          node: nodeOf(id),
        });
      }
    }
    return changed;
  }
}

/** A label selector matching more servers than the type allows: the API ignores the rest, say so. */
export function warnTooManyTargets(
  eligible: number,
  type: { name?: string; max_targets?: number } | undefined,
  warnings: ProviderWarning[],
): void {
  const max = type?.max_targets;
  if (max === undefined || eligible <= max) return;
  warnings.push({
    reason: "MaxTargetsReached",
    message: `${eligible} eligible Nodes, but load balancer type ${type?.name} allows ${max} targets: ` +
      `only ${max} receive traffic; choose a larger type (annotation load-balancer.hetzner.cloud/type)`,
  });
}

/**
 * The Nodes the Service's `node-selector` admits (all without one), and those named in `keep`
 * (draining after they stopped matching).
 */
export function selectedNodes(nodes: Node[], spec: LoadBalancerSpec, keep?: ReadonlySet<string>): Node[] {
  if (!spec.nodeSelector) return nodes;
  const selector = parseLabelSelector(spec.nodeSelector);
  return nodes.filter((n) => selector.matches(n.metadata?.labels ?? {}) || keep?.has(n.metadata?.name ?? ""));
}
