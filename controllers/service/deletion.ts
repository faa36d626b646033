/**
 * A Service that no longer wants a balancer (deleted, or no longer of type LoadBalancer or of our
 * class) while it holds the finalizer: the provider takes what it owns, the Service's state
 * annotations and ingress are cleared (when it stays), and the finalizer goes last, so a failed
 * deletion is retried and the Service never disappears with its balancer left behind.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { SERVICES } from "../../kube/resources.ts";
import type { LoadBalancers } from "../../providers/provider.ts";
import { patchStatus, setFinalizer } from "./writes.ts";

/** What the deletion works with. */
export interface ServiceDeletionParts {
  client: KubeClient;
  lbs: LoadBalancers;
  recorder: EventRecorder;
  clusterName: string;
  /** Writes the provider's state annotations (and remembers their keys as state). */
  patchAnnotations(svc: Service, annotations: Record<string, string | null>): Promise<void>;
}

/** Releases `svc`'s balancer, with the events upstream records; throws (after a Warning) on failure. */
export async function releaseBalancer(
  parts: ServiceDeletionParts,
  svc: Service,
  signal: AbortSignal,
): Promise<void> {
  parts.recorder.event(SERVICES, svc, "Normal", "DeletingLoadBalancer", "Deleting load balancer");
  let released;
  try {
    released = await parts.lbs.ensureLoadBalancerDeleted(parts.clusterName, svc, signal);
  } catch (err) {
    if (signal.aborted) throw err; // cancelled, not failed: no event
    parts.recorder.event(
      SERVICES,
      svc,
      "Warning",
      "DeleteLoadBalancerFailed",
      `Error deleting load balancer: ${(err as Error).message}`,
    );
    throw err;
  }
  if (released?.annotations && !svc.metadata?.deletionTimestamp) {
    await parts.patchAnnotations(svc, released.annotations);
  }
  await setFinalizer(parts.client, svc, false);
  if (!svc.metadata?.deletionTimestamp && (svc.status?.loadBalancer?.ingress ?? []).length) {
    await patchStatus(parts.client, svc, { status: { loadBalancer: { ingress: [] } } });
  }
  parts.recorder.event(
    SERVICES,
    svc,
    "Normal",
    "DeletedLoadBalancer",
    released?.outcome ?? "Deleted load balancer",
  );
}
