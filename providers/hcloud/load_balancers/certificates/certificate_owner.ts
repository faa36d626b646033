/**
 * Whose a certificate is, when a Service names it by ID or name (`http-certificates`, or per port):
 * what this CCM (or another cluster's, or the official CCM) made for one Service or one TLS Secret
 * belongs to it, whatever `HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES` says (security probe
 * P1). That list is consent for objects made *outside* the CCM only (consent.ts).
 *
 * - Uploaded from a TLS Secret (label `deno-ccm/tls-secret`): never by ID or name; a Service of the
 *   Secret's namespace names the Secret instead (`service.deno-ccm.io/tls-secret`). So a renewal or a
 *   deletion can always take the old certificate (and its key) out of the project.
 * - Made for a Service (label `hcloud-ccm/service-uid`, a managed certificate): only by that Service,
 *   or by the Service its identity labels name once that one is gone (a recreated Service).
 * - Labelled for another cluster (`deno-ccm/cluster-id`): never.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import {
  CLUSTER_ID_LABEL,
  SERVICE_NAME_LABEL,
  SERVICE_NAMESPACE_LABEL,
  SERVICE_UID_LABEL,
} from "../core/labels.ts";
import { TLS_REF_LABEL, TLS_SECRET_ANNOTATION } from "../../names.ts";

/** The Secret a certificate was uploaded from: a hash of `namespace/name` (label values hold 63 characters). */
export { TLS_REF_LABEL };
/** The namespace of the Secret a certificate was uploaded from (for messages; ours). */
export const TLS_NAMESPACE_LABEL = "deno-ccm/secret-namespace";
/** The name of that Secret, when it fits a label value (for messages; ours). */
export const TLS_NAME_LABEL = "deno-ccm/secret-name";

/** What the owner rule reads of a certificate. */
export interface CertificateFacts {
  id: number;
  name: string;
  labels?: Record<string, string>;
}

/** What the owner rule knows of the cluster. */
export interface OwnerContext {
  /** This cluster's ID, once known. */
  clusterId?: string;
  /** Whether a Service UID is live in this cluster (unknown: assume it is, the safe side). */
  serviceExists(uid: string): boolean;
  /** `namespace/name` of a live Service, when known. */
  serviceName?(uid: string): string | undefined;
}

/**
 * Why `service` may not use `certificate`, as a whole sentence naming whose it is and the way out;
 * undefined when it was made for this Service, or not by a CCM at all (then consent.ts decides).
 */
export function certificateOwnerProblem(
  certificate: CertificateFacts,
  service: Service,
  ctx: OwnerContext,
): string | undefined {
  const labels = certificate.labels ?? {};
  const what = `certificate ${certificate.id} ("${certificate.name}")`;
  const cluster = labels[CLUSTER_ID_LABEL];
  if (cluster !== undefined && ctx.clusterId !== undefined && cluster !== ctx.clusterId) {
    return `${what} was made by the CCM of another cluster (${CLUSTER_ID_LABEL}=${cluster}); only that ` +
      "cluster's Services use it. Nothing was changed";
  }
  if (labels[TLS_REF_LABEL] !== undefined) {
    const ns = labels[TLS_NAMESPACE_LABEL];
    const secret = ns ? `Secret ${ns}/${labels[TLS_NAME_LABEL] ?? "…"}` : "a TLS Secret";
    return `${what} was made by this CCM for ${secret}; it is served only through the Secret: a Service ` +
      `of ${ns ? `namespace ${ns}` : "the Secret's namespace"} names it with ${TLS_SECRET_ANNOTATION}. ` +
      "Nothing was changed";
  }
  const owner = labels[SERVICE_UID_LABEL];
  const uid = service.metadata?.uid;
  if (owner === undefined || owner === uid) return undefined;
  const ns = labels[SERVICE_NAMESPACE_LABEL];
  const name = labels[SERVICE_NAME_LABEL];
  const own = service.metadata ?? {};
  const alive = ctx.serviceExists(owner);
  // Left by a deleted Service and made for this one's namespace and name: a recreated Service's.
  if (!alive && ns === (own.namespace ?? "default") && name === own.name) return undefined;
  const whose = ns !== undefined
    ? `Service ${ns}/${name ?? "?"}`
    : `Service ${ctx.serviceName?.(owner) ?? `UID ${owner}`}`;
  return `${what} was made by a CCM for ${whose}${alive ? "" : ", which is gone"}; it belongs to that ` +
    "Service only. Use a certificate of your own (a managed one with certificate-type: managed, or an " +
    "upload). Nothing was changed";
}
