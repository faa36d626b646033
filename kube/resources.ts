/**
 * Descriptors of the API resources the CCM uses, and how their URL paths are built.
 *
 * @module
 */
import type { Event, Namespace, Node, Secret, Service } from "kubernetes-types/core/v1.d.ts";
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.d.ts";
import type { DaemonSet, Deployment, ReplicaSet } from "kubernetes-types/apps/v1.d.ts";

/** Where a resource lives in the API. `T` is the object type. */
export interface ResourceType<T = unknown> {
  /** `v1` for the core group, else `group/version`. */
  apiVersion: string;
  /** The object kind, e.g. `Node`. */
  kind: string;
  /** Lower-case plural used in URLs, e.g. `nodes`. */
  plural: string;
  /** Whether objects live in namespaces. */
  namespaced: boolean;
  /** Phantom field carrying the object type; never set. */
  readonly _type?: T;
}

/** Core v1 Nodes. */
export const NODES: ResourceType<Node> = {
  apiVersion: "v1",
  kind: "Node",
  plural: "nodes",
  namespaced: false,
};
/** Core v1 Services. */
export const SERVICES: ResourceType<Service> = {
  apiVersion: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
/** Core v1 Events. */
export const EVENTS: ResourceType<Event> = {
  apiVersion: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};
/** Core v1 Namespaces. */
export const NAMESPACES: ResourceType<Namespace> = {
  apiVersion: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};
/** Core v1 Secrets (the CCM reads only those labelled for it: controllers/service/secrets.ts). */
export const SECRETS: ResourceType<Secret> = {
  apiVersion: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
/** coordination.k8s.io/v1 Leases. */
export const LEASES: ResourceType<Lease> = {
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
};

/** apps/v1 Deployments (named in events only: the other-CCM guard reads their ReplicaSets). */
export const DEPLOYMENTS: ResourceType<Deployment> = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};
/** apps/v1 ReplicaSets (kube/other_ccm.ts: which image each runs, and how many pods). */
export const REPLICA_SETS: ResourceType<ReplicaSet> = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  plural: "replicasets",
  namespaced: true,
};
/** apps/v1 DaemonSets (kube/other_ccm.ts). */
export const DAEMON_SETS: ResourceType<DaemonSet> = {
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  plural: "daemonsets",
  namespaced: true,
};

/** certificates.k8s.io/v1 CertificateSigningRequests. */
export const CERTIFICATE_SIGNING_REQUESTS: ResourceType<CertificateSigningRequest> = {
  apiVersion: "certificates.k8s.io/v1",
  kind: "CertificateSigningRequest",
  plural: "certificatesigningrequests",
  namespaced: false,
};

/** The URL path of a collection or one object, optionally a subresource. */
export function resourcePath(
  type: ResourceType,
  options: { namespace?: string; name?: string; subresource?: string } = {},
): string {
  const base = type.apiVersion.includes("/") ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  let path = base;
  if (type.namespaced && options.namespace) path += `/namespaces/${encodeURIComponent(options.namespace)}`;
  path += `/${type.plural}`;
  if (options.name !== undefined) path += `/${encodeURIComponent(options.name)}`;
  if (options.subresource) path += `/${options.subresource}`;
  return path;
}
