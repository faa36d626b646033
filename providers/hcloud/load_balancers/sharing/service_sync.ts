/**
 * A Service's sync on a balancer it does not own alone: its ports and certificates are built as for
 * its own balancer (certificates/ports.ts), then the shared or co-managed balancer takes them; a Service
 * that served on a shared balancer and no longer does leaves it first.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerResult, ProviderWarning } from "../../../provider.ts";
import { ProviderError, TerminalError } from "../../../errors.ts";
import type { ServiceRequest } from "../core/request.ts";
import type { ServicePorts } from "../certificates/mod.ts";
import type { CatalogCache } from "../core/catalog_cache.ts";
import { checkCatalog } from "../core/catalog_checks.ts";
import { checkServiceFields } from "../core/service_fields.ts";
import { SHARED_STATE, type SharedBalancers } from "./shared.ts";
import type { CoManagedBalancers } from "./co_managed.ts";

/** What these syncs work with, handed once at construction. */
export interface SharingParts {
  catalog: CatalogCache;
  ports: ServicePorts;
  shared: SharedBalancers;
  coManaged: CoManagedBalancers;
}

/** See the module doc. */
export class SharingSync {
  readonly #p: SharingParts;

  /** Syncs over the shared and co-managed balancers and the parts they use. */
  constructor(parts: SharingParts) {
    this.#p = parts;
  }

  /** A Service on a shared balancer (shared.ts): its ports, and the cluster's target. */
  async shared(req: ServiceRequest): Promise<LoadBalancerResult> {
    const p = this.#p;
    const { service, spec, nodes } = req;
    const warnings: ProviderWarning[] = [];
    await checkCatalog(p.catalog, spec, warnings);
    const { certificates, services, warnings: serviceWarnings } = await p.ports.of(req);
    const fields = checkServiceFields(service, spec, services.length);
    warnings.push(...certificates.warnings, ...serviceWarnings, ...fields.warnings);
    if (fields.refuseCreate) throw new ProviderError(new TerminalError(fields.refuseCreate), { warnings });
    const result = await p.shared.ensure(service, spec, services, nodes);
    await p.ports.synced(service, certificates.secrets);
    return { ...result, warnings };
  }

  /** Takes a Service whose record says it served on a shared balancer off it; the record to clear. */
  async leaveShared(service: Service): Promise<Record<string, null> | undefined> {
    if (service.metadata?.annotations?.[SHARED_STATE] === undefined) return undefined;
    await this.#p.shared.release(service);
    return { [SHARED_STATE]: null };
  }

  /** A Service attached to a balancer made outside Kubernetes: only its ports and the target are ours. */
  async coManaged(req: ServiceRequest): Promise<LoadBalancerResult> {
    const p = this.#p;
    const { service, spec, nodes } = req;
    const { certificates, services, warnings } = await p.ports.of(req);
    const fields = checkServiceFields(service, spec, services.length);
    const result = await p.coManaged.ensure(service, spec, services, nodes);
    await p.ports.synced(service, certificates.secrets);
    return {
      ...result,
      warnings: [...certificates.warnings, ...warnings, ...fields.warnings, ...result.warnings ?? []],
    };
  }
}
