/**
 * A Service's ports as balancer services, with the certificates they serve, for every kind of
 * balancer (its own, shared, co-managed); and after a sync, the clean-up of the certificates of TLS
 * Secrets it no longer serves (a renewal, a Service moved to another Secret): no key is left behind.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { LbCertificates } from "./certificates.ts";
import { type DesiredService, desiredServices } from "../core/desired.ts";
import type { ServiceRequest } from "../core/request.ts";
import type { ProviderWarning } from "../../../provider.ts";
import type { ClusterFacts } from "../core/cluster_facts.ts";

/** What a Service's ports come to: the services, the certificates they use, warnings. */
export interface ServicePortsResult {
  /** The balancer services (one per port). */
  services: DesiredService[];
  /** Certificate IDs, warnings, and the TLS Secrets (`namespace/name`) served. */
  certificates: Awaited<ReturnType<LbCertificates["resolve"]>>;
  /** Ports that cannot be served, and other port problems. */
  warnings: ProviderWarning[];
}

/** See the module doc. */
export class ServicePorts {
  readonly #certificates: LbCertificates;
  readonly #facts: ClusterFacts;
  /** The TLS Secrets (`namespace/name`) each Service's last sync served, by UID. */
  readonly #tlsRefs = new Map<string, string[]>();

  /** `facts`: the cluster served (certificates are labelled with its identity). */
  constructor(certificates: LbCertificates, facts: ClusterFacts) {
    this.#certificates = certificates;
    this.#facts = facts;
  }

  /** The Service's ports as balancer services, with the certificates they use. */
  async of({ service, spec, secrets }: ServiceRequest): Promise<ServicePortsResult> {
    // As the official CCM: a managed certificate is made whenever one is asked for, used by https services.
    const certificates = LbCertificates.wanted(spec)
      ? await this.#certificates.resolve(service, spec, secrets)
      : { ids: [], byPort: new Map(), warnings: [], secrets: [] };
    return { certificates, ...desiredServices(service, spec, certificates.ids, certificates.byPort) };
  }

  /**
   * After a sync put the certificates of the TLS Secrets `refs` in place: older certificates of those
   * Secrets go (a renewal), and so do the unused ones of Secrets the Service named at its last sync
   * and no longer does (it moved to another Secret).
   */
  async synced(service: Service, refs: string[]): Promise<void> {
    const uid = service.metadata!.uid!;
    const before = this.#tlsRefs.get(uid) ?? [];
    await this.#certificates.tls.cleanUp(this.#facts.clusterId(), refs);
    const dropped = before.filter((ref) => !refs.includes(ref));
    if (dropped.length) await this.#certificates.tls.sweep(this.#facts.clusterId(), dropped);
    if (refs.length) this.#tlsRefs.set(uid, refs);
    else this.#tlsRefs.delete(uid);
  }

  /** The Service is gone: nothing of it is remembered. */
  forget(service: Service): void {
    this.#tlsRefs.delete(service.metadata?.uid ?? "");
  }
}
