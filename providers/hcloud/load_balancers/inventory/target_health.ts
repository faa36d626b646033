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
import { SERVICE_NAME_LABEL, SERVICE_NAMESPACE_LABEL, SERVICE_UID_LABEL } from "../labels.ts";
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

/** Counts the balancer's targets by health. */
export function targetHealth(lb: Pick<LB, "targets">): TargetHealth {
  const counts: TargetHealth = { healthy: 0, unhealthy: 0, unknown: 0 };
  const count = (health: HealthStatus) => {
    const statuses = (health ?? []).map((h) => h.status);
    if (statuses.includes("unhealthy")) counts.unhealthy++;
    else if (statuses.length && statuses.every((s) => s === "healthy")) counts.healthy++;
    else counts.unknown++;
  };
  for (const target of lb.targets ?? []) {
    const resolved = (target as { targets?: { health_status?: HealthStatus }[] }).targets;
    if (target.type === "label_selector") { for (const t of resolved ?? []) count(t.health_status); }
    else count((target as { health_status?: HealthStatus }).health_status);
  }
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
  return { name: lb.name, service, health: targetHealth(lb) };
}

/** `hcloud_load_balancer_targets{load_balancer,service,health}`, set from each drift list. */
export class TargetHealthGauge {
  readonly #gauge;

  /** Registers the gauge in `registry`. */
  constructor(registry: Registry) {
    this.#gauge = registry.gauge(
      "hcloud_load_balancer_targets",
      "Targets of this cluster's load balancers by health, as the last drift repair list showed them.",
    );
  }

  /** Replaces every series with those of `balancers` (a balancer gone takes its series with it). */
  update(balancers: BalancerHealth[]): void {
    this.#gauge.clear();
    for (const { name, service, health } of balancers) {
      for (const [state, n] of Object.entries(health)) {
        this.#gauge.set({ load_balancer: name, service, health: state }, n);
      }
    }
  }
}
