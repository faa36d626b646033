/**
 * The labels that tie a Hetzner load balancer (or a managed certificate) to its Service and to the
 * cluster that made it.
 *
 * The UID label is the official CCM's and says which Service owns the object while that Service
 * lives. The identity labels (namespace and name) say which Service it was made for once that
 * Service is gone: only a Service of the same namespace and name takes it over then (issue 33,
 * probe N6), so a tenant of another namespace cannot claim a left-behind balancer by its name.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import {
  CLUSTER_ID_LABEL,
  SERVICE_NAME_LABEL,
  SERVICE_NAMESPACE_LABEL,
  SERVICE_UID_LABEL,
} from "../../names.ts";

export { CLUSTER_ID_LABEL, SERVICE_NAME_LABEL, SERVICE_NAMESPACE_LABEL, SERVICE_UID_LABEL };

/**
 * The identity labels of a Service. Namespace and Service names are DNS labels of at most 63
 * characters, which Hetzner accepts as label values as they are.
 */
export function identityLabels(service: Service): Record<string, string> {
  const { namespace = "default", name = "" } = service.metadata ?? {};
  return { [SERVICE_NAMESPACE_LABEL]: namespace, [SERVICE_NAME_LABEL]: name };
}

/**
 * The Service (`namespace/name`) an object's identity labels name when that is not `service`;
 * undefined when they name `service` or are absent (objects made before these labels, or by the
 * official CCM, keep the official CCM's takeover rule).
 */
export function madeForAnother(
  labels: Record<string, string> | undefined,
  service: Service,
): string | undefined {
  const namespace = labels?.[SERVICE_NAMESPACE_LABEL];
  const name = labels?.[SERVICE_NAME_LABEL];
  if (namespace === undefined && name === undefined) return undefined;
  const own = identityLabels(service);
  if (namespace === own[SERVICE_NAMESPACE_LABEL] && name === own[SERVICE_NAME_LABEL]) return undefined;
  return `${namespace ?? "?"}/${name ?? "?"}`;
}
