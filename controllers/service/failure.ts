/**
 * A failed Service sync, as the Service shows it: the provider's warnings, a `SyncLoadBalancerFailed`
 * event, the `LoadBalancerReady` condition False, and, when the sync left the Service without a
 * balancer of its own (the provider says so: none found and none made, or its name refused), its
 * ingress cleared, since the cloud may give those addresses to another balancer (security probe O4, N6).
 * No cloud call.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { objectKey } from "../../kube/informer.ts";
import { SERVICES } from "../../kube/resources.ts";
import type { logger } from "../../lib/log.ts";
import { leftNoBalancer, warningsOf } from "../../providers/errors.ts";
import { failedCondition, statusPatch } from "./status.ts";
import type { ServiceWarnings } from "./warnings.ts";
import { patchStatus } from "./writes.ts";

/** What reporting a failure works with. */
export interface FailureParts {
  client: KubeClient;
  recorder: EventRecorder;
  warnings: ServiceWarnings;
  log: ReturnType<typeof logger>;
}

/** Says on `svc` that its sync failed with `err`; a status write that fails is logged, never thrown. */
export async function reportSyncFailure(parts: FailureParts, svc: Service, err: unknown): Promise<void> {
  parts.warnings.say(svc, [...warningsOf(err)]);
  parts.recorder.event(
    SERVICES,
    svc,
    "Warning",
    "SyncLoadBalancerFailed",
    `Error syncing load balancer: ${(err as Error).message}`,
  );
  const key = objectKey(svc);
  const lost = leftNoBalancer(err) && (svc.status?.loadBalancer?.ingress ?? []).length > 0;
  if (lost) {
    parts.log.warning("the load balancer of {service} is gone and was not made again; clearing its ingress", {
      service: key,
    });
  }
  // The failure goes on the Service too; a write that fails here must not hide the sync's error.
  await patchStatus(parts.client, svc, statusPatch(svc, failedCondition(err), lost ? [] : undefined))
    .catch((e) =>
      parts.log.warning("cannot write the status of {service}: {error}", {
        service: key,
        error: (e as Error).message,
      })
    );
}
