/**
 * The health of a balancer's targets as the API reports it (`targets[].health_status`, one status
 * per service port; label-selector targets carry their resolved servers): read from the list the
 * drift repair makes anyway, so it costs no call. A target is unhealthy when any port is, healthy when
 * every port is, unknown otherwise (no health check has answered yet).
 *
 * @module
 */
import type { Schemas } from "../../../../hcloud_api/mod.ts";
import type { Registry } from "../../../../lib/metrics.ts";
import { SERVICE_NAME_LABEL, SERVICE_NAMESPACE_LABEL, SERVICE_UID_LABEL } from "../core/labels.ts";
import { SHARE_LABEL } from "../../names.ts";

type LB = Schemas["load_balancer"];

/** Targets by health. */
export interface TargetHealth {
  /** Targets the API reports healthy. */
  healthy: number;
  /** Targets the API reports unhealthy. */
  unhealthy: number;
  /** Targets whose health the API does not know yet. */
  unknown: number;
}

type HealthStatus = { status?: string }[] | undefined;
type Health = keyof TargetHealth;

/** One target's health: unhealthy when any port is, healthy when every port is, else unknown. */
function healthOf(health: HealthStatus): Health {
  const statuses = (health ?? []).map((h) => h.status);
  if (statuses.includes("unhealthy")) return "unhealthy";
  if (statuses.length && statuses.every((s) => s === "healthy")) return "healthy";
  return "unknown";
}

interface ApiTarget {
  type?: string;
  server?: { id?: number };
  ip?: { ip?: string };
  health_status?: HealthStatus;
  targets?: ApiTarget[];
}

/** Every target with its health, a label selector's resolved servers one by one; named by server ID or IP. */
export function eachTarget(lb: Pick<LB, "targets">): { target: string; health: Health }[] {
  const out: { target: string; health: Health }[] = [];
  const add = (t: ApiTarget) =>
    out.push({ target: String(t.server?.id ?? t.ip?.ip ?? ""), health: healthOf(t.health_status) });
  for (const target of (lb.targets ?? []) as ApiTarget[]) {
    if (target.type === "label_selector") { for (const t of target.targets ?? []) add(t); }
    else add(target);
  }
  return out;
}

/** Counts the balancer's targets by health. */
export function targetHealth(lb: Pick<LB, "targets">): TargetHealth {
  const counts: TargetHealth = { healthy: 0, unhealthy: 0, unknown: 0 };
  for (const { health } of eachTarget(lb)) counts[health]++;
  return counts;
}

/**
 * Why no target of the balancer passes its health check, or undefined when one does (or none has
 * answered yet): the check in words, so the owner sees which setting the Nodes do not serve.
 */
export function allUnhealthy(lb: Pick<LB, "targets" | "services">): string | undefined {
  const health = targetHealth(lb);
  if (health.healthy > 0 || health.unhealthy === 0) return undefined;
  const checks = [
    ...new Set((lb.services ?? []).map((s) => {
      const hc = s.health_check;
      return `${hc.protocol} on port ${hc.port}${
        hc.protocol === "http" ? ` path ${hc.http?.path ?? "/"}` : ""
      }`;
    })),
  ];
  return `none of its ${health.unhealthy} targets passes the health check (${checks.join("; ")}); check ` +
    "the health-check settings (a kube-proxy check needs kube-proxy on the Nodes)";
}

/** One balancer's target health, taken from the API's answer before its details are dropped. */
export interface BalancerHealth {
  /** The balancer's name. */
  name: string;
  /**
   * `namespace/name` of its Service, `namespace/shared:<key>` for a shared balancer, or the owner UID
   * for a balancer without identity labels.
   */
  service: string;
  /** How many of its targets pass their checks. */
  health: TargetHealth;
  /** Each checked target (server ID or IP) and whether it passes (a target not checked yet is left out). */
  targets: { target: string; healthy: boolean }[];
}

/** What {@link TargetHealthGauge.update} needs of a balancer, read as the API sent it. */
export function balancerHealth(lb: Pick<LB, "name" | "labels" | "targets">): BalancerHealth {
  const labels = lb.labels ?? {};
  const namespace = labels[SERVICE_NAMESPACE_LABEL];
  const name = labels[SERVICE_NAME_LABEL];
  // A shared balancer serves several Services of its namespace: it is named by its share key.
  const service = namespace && name
    ? `${namespace}/${name}`
    : namespace && labels[SHARE_LABEL]
    ? `${namespace}/shared:${labels[SHARE_LABEL]}`
    : labels[SERVICE_UID_LABEL] ?? "";
  const targets = eachTarget(lb).filter((t) => t.health !== "unknown")
    .map((t) => ({ target: t.target, healthy: t.health === "healthy" }));
  return { name: lb.name, service, health: targetHealth(lb), targets };
}

/**
 * `hcloud_load_balancer_targets{load_balancer,service,health}` and, per target,
 * `hcloud_load_balancer_target_healthy{load_balancer,target}`, set from each drift list.
 */
export class TargetHealthGauge {
  readonly #gauge;
  readonly #perTarget;

  /** Registers the gauge in `registry`. */
  constructor(registry: Registry) {
    this.#gauge = registry.gauge(
      "hcloud_load_balancer_targets",
      "Targets of this cluster's load balancers by health, as the last drift repair list showed them.",
    );
    // The name kube-hetzner's optional alert reads (`sum(hcloud_load_balancer_target_healthy == 0) > 0`).
    // At most a balancer's target limit of series per balancer (25 to 150 by type).
    this.#perTarget = registry.gauge(
      "hcloud_load_balancer_target_healthy",
      "1 while the target (label target: server ID or IP) passes every health check of the balancer, 0 while " +
        "one fails, as the last drift repair list showed it; a target not checked yet has no series.",
    );
  }

  /** Replaces every series with those of `balancers` (a balancer gone takes its series with it). */
  update(balancers: BalancerHealth[]): void {
    this.#gauge.clear();
    this.#perTarget.clear();
    for (const { name, service, health, targets } of balancers) {
      for (const [state, n] of Object.entries(health)) {
        this.#gauge.set({ load_balancer: name, service, health: state }, n);
      }
      for (const { target, healthy } of targets) {
        this.#perTarget.set({ load_balancer: name, target }, healthy ? 1 : 0);
      }
    }
  }
}
