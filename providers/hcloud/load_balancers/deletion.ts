/**
 * A Service's balancer goes with the Service: its own balancer is deleted (unless delete-protected:
 * then it stays with its IPs and certificates, and the Service can still go); on a shared balancer
 * only its ports and claims leave (the last member deletes it); from a co-managed balancer only its
 * ports. Managed certificates made for it and those uploaded from its TLS Secrets follow, unless
 * something else still uses them.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { CloudApiError, type HcloudClient } from "../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "./spec/mod.ts";
import type { LbCertificates } from "./certificates/mod.ts";
import type { CoManagedBalancers } from "./sharing/mod.ts";
import type { DriftRecord } from "./inventory/mod.ts";
import type { LbLookup } from "./own/lookup.ts";
import { SHARED_STATE, type SharedBalancers } from "./sharing/mod.ts";
import { tlsSecretNames } from "./spec/mod.ts";
import type { ClusterFacts } from "./core/cluster_facts.ts";

/** What the deletion works with. */
export interface DeletionParts {
  client: HcloudClient;
  /** The cluster served. */
  facts: ClusterFacts;
  shared: SharedBalancers;
  coManaged: CoManagedBalancers;
  certificates: LbCertificates;
  lookup: LbLookup;
  /** What the last sync asked of each balancer: forgotten with it. */
  asked: Map<number, DriftRecord>;
}

/** Deletes what `service` (with its parsed `spec`) had; the annotations to clear on it, if any. */
export async function deleteServiceBalancer(
  parts: DeletionParts,
  service: Service,
  spec: LoadBalancerSpec,
): Promise<void | { annotations?: Record<string, null>; outcome?: string }> {
  if (spec.share || service.metadata?.annotations?.[SHARED_STATE] !== undefined) {
    const outcome = await parts.shared.release(service);
    const https = spec.protocol === "https" || [...spec.ports.values()].some((p) => p.protocol === "https");
    await deleteCertificates(parts, service, spec, https);
    return { annotations: { [SHARED_STATE]: null }, outcome };
  }
  const released = await parts.coManaged.release(service);
  if (released || spec.attachTo) {
    await parts.certificates.deleteFor(service);
    // The balancer is its maker's: only what the Service added went.
    const outcome = `Removed the Service's ports from load balancer ${spec.attachTo ?? ""}`.trimEnd() +
      " (made outside Kubernetes; it stays)";
    return { ...released, outcome };
  }
  const lb = await parts.lookup.findByUid(service);
  if (lb) parts.asked.delete(lb.id);
  // Delete protection wins: the load balancer (and its IPs and certificates) stay; the Service can go.
  if (lb?.protection?.delete) return { outcome: `Kept load balancer ${lb.name}: delete protection is on` };
  if (lb) {
    try {
      await parts.client.call(
        "delete load balancer",
        parts.client.api.DELETE("/load_balancers/{id}", { params: { path: { id: lb.id } } }),
      );
    } catch (err) {
      if (!(err instanceof CloudApiError && err.status === 404)) throw err;
    }
  }
  await deleteCertificates(parts, service, spec, lb?.services.some((s) => s.protocol === "https") ?? false);
}

/**
 * Managed certificates created for the Service go with its balancer (unless used elsewhere), and
 * those uploaded from the TLS Secrets it named (unless another balancer uses them).
 */
async function deleteCertificates(
  parts: DeletionParts,
  service: Service,
  spec: LoadBalancerSpec,
  servedHttps: boolean,
): Promise<void> {
  if (spec.certificateType === "managed" || servedHttps) await parts.certificates.deleteFor(service);
  const namespace = service.metadata?.namespace ?? "default";
  const refs = tlsSecretNames(spec).map((name) => `${namespace}/${name}`);
  if (refs.length) await parts.certificates.tls.sweep(parts.facts.clusterId(), refs);
}
