/**
 * What the load-balancer room knows of the cluster it serves: its identity and its Services, learnt
 * once from the provider's `initialize` (the contract's `ClusterView`). Every collaborator gets this
 * one object at construction and asks it when it needs to; none keeps a copy or takes the facts as
 * arguments, so no collaborator can act on a stale or missing identity another one already has.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { ClusterView } from "../../../provider.ts";

/** See the module doc. */
export class ClusterFacts {
  #clusterId?: string;
  #services?: () => Iterable<Service>;

  /** The facts of `view` (from the provider's `initialize`); tools without a cluster learn none. */
  learn(view: ClusterView): void {
    this.#clusterId = view.clusterId;
    this.#services = view.services?.bind(view);
  }

  /** The cluster's identity (the kube-system namespace's UID): what labels its objects in the cloud. */
  clusterId(): string | undefined {
    return this.#clusterId;
  }

  /** The cluster's Services now, or undefined while they are unknown (every owner then counts as alive). */
  services(): Service[] | undefined {
    return this.#services ? [...this.#services()] : undefined;
  }

  /** Whether a Service with this UID exists (unknown Services: assumed to). */
  serviceExists(uid: string): boolean {
    const services = this.services();
    return services === undefined || services.some((svc) => svc.metadata?.uid === uid);
  }

  /** `namespace/name` of the live Service with this UID, for messages. */
  serviceName(uid: string): string | undefined {
    const found = this.services()?.find((svc) => svc.metadata?.uid === uid)?.metadata;
    return found && `${found.namespace ?? "default"}/${found.name}`;
  }
}
