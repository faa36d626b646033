/**
 * The Service's `status.conditions` entry `LoadBalancerReady` (ours; GCP and others write Service
 * conditions): True after a successful sync (reason `Ensured`, or the first warning's reason when the
 * balancer serves with a limit, such as `MaxTargetsReached`), False after a failed one (`Refused`:
 * the Service's own settings must change, the message names field and value; `SyncFailed`: retried).
 * Written with the status write a sync makes anyway, and only when type, status, reason or message
 * change: a resync that changes nothing writes nothing. Events stay as they are.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { Condition } from "kubernetes-types/meta/v1.d.ts";
import type { LoadBalancerIngress, ProviderWarning } from "../../providers/provider.ts";
import { rootCause, TerminalError } from "../../kube/reconcile.ts";

/** The condition's type. */
export const READY_CONDITION = "LoadBalancerReady";

/** Warnings that are advice, not a problem of the balancer: they name the condition only alone. */
const ADVICE = new Set(["LoadBalancerTypeUnconfigured"]);

/** Messages are cut to this length (the API allows 32 KiB; a Warning names the whole problem anyway). */
const MAX_MESSAGE = 1024;

/** The condition after a successful sync. */
export function readyCondition(warnings: ProviderWarning[] = []): Omit<Condition, "lastTransitionTime"> {
  // Advice (an unset type) never names the condition while a real problem is there (probe P6).
  const own = [
    ...warnings.filter((w) => !w.node && !ADVICE.has(w.reason)),
    ...warnings.filter((w) => !w.node && ADVICE.has(w.reason)),
  ];
  return own.length
    ? {
      type: READY_CONDITION,
      status: "True",
      reason: own[0].reason,
      message: cut(own.map((w) => w.message).join("; ")),
    }
    : {
      type: READY_CONDITION,
      status: "True",
      reason: "Ensured",
      message: "The load balancer serves the Service",
    };
}

/** The condition after a failed sync. */
export function failedCondition(err: unknown): Omit<Condition, "lastTransitionTime"> {
  const refused = rootCause(err) instanceof TerminalError;
  return {
    type: READY_CONDITION,
    status: "False",
    reason: refused ? "Refused" : "SyncFailed",
    message: cut((err as Error).message ?? String(err)),
  };
}

/**
 * The status merge patch that brings `svc` to `condition` (and `ingress`, when given), or
 * `undefined` when both are as they are. Other conditions are kept.
 */
export function statusPatch(
  svc: Service,
  condition: Omit<Condition, "lastTransitionTime">,
  ingress?: LoadBalancerIngress[],
): { status: Record<string, unknown> } | undefined {
  const conditions = svc.status?.conditions ?? [];
  const current = conditions.find((c) => c.type === READY_CONDITION);
  const same = current && current.status === condition.status && current.reason === condition.reason &&
    current.message === condition.message;
  if (same && ingress === undefined) return undefined;
  const status: Record<string, unknown> = {};
  if (ingress !== undefined) status.loadBalancer = { ingress };
  if (!same) {
    const lastTransitionTime = current?.status === condition.status
      ? current.lastTransitionTime
      : new Date().toISOString().replace(/\.\d+Z$/, "Z");
    status.conditions = [
      ...conditions.filter((c) => c.type !== READY_CONDITION),
      { ...condition, lastTransitionTime, observedGeneration: svc.metadata?.generation },
    ];
  }
  return { status };
}

function cut(message: string): string {
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
}
