/**
 * The service controller's writes to a Service, all through `services/status` (all the RBAC a CCM
 * needs on Services): the finalizer, the provider's state annotations, and status patches (ingress,
 * the `LoadBalancerReady` condition). A Service that is gone is not an error.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { KubeClient } from "../../kube/client.ts";
import { KubeApiError } from "../../kube/errors.ts";
import { SERVICES } from "../../kube/resources.ts";
import { LB_FINALIZER } from "../../kube/well_known.ts";
import type { LoadBalancerIngress } from "../../providers/provider.ts";

/** Whether the Service carries our finalizer. */
export function hasFinalizer(svc: Service): boolean {
  return (svc.metadata?.finalizers ?? []).includes(LB_FINALIZER);
}

/** Adds or removes our finalizer; false when the Service is gone (then nothing else may happen for it). */
export async function setFinalizer(client: KubeClient, svc: Service, present: boolean): Promise<boolean> {
  const others = (svc.metadata?.finalizers ?? []).filter((f) => f !== LB_FINALIZER);
  try {
    await client.patch(SERVICES, svc.metadata!.name!, "merge", {
      metadata: {
        finalizers: present ? [...others, LB_FINALIZER] : others,
        resourceVersion: svc.metadata?.resourceVersion,
      },
    }, { namespace: svc.metadata!.namespace, subresource: "status" });
    return true;
  } catch (err) {
    if (err instanceof KubeApiError && err.isNotFound) return false;
    throw err;
  }
}

/** Writes the provider's state annotations (null removes one) when they differ. */
export async function patchAnnotations(
  client: KubeClient,
  svc: Service,
  annotations: Record<string, string | null>,
): Promise<void> {
  const current = svc.metadata?.annotations ?? {};
  if (Object.entries(annotations).every(([k, v]) => (current[k] ?? null) === v)) return;
  await patchStatus(client, svc, { metadata: { annotations } });
}

/** A merge patch through `services/status` (nothing when it is `undefined`). */
export async function patchStatus(
  client: KubeClient,
  svc: Service,
  patch: object | undefined,
): Promise<void> {
  if (!patch) return;
  try {
    await client.patch(SERVICES, svc.metadata!.name!, "merge", patch, {
      namespace: svc.metadata!.namespace,
      subresource: "status",
    });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.isNotFound)) throw err;
  }
}

/** Whether two ingress lists are the same (order kept). */
export function sameIngress(
  a: { ip?: string; hostname?: string; ipMode?: string }[],
  b: LoadBalancerIngress[],
): boolean {
  const key = (l: { ip?: string; hostname?: string; ipMode?: string }[]) =>
    JSON.stringify(l.map((i) => [i.ip ?? "", i.hostname ?? "", i.ipMode ?? ""]));
  return key(a) === key(b);
}
