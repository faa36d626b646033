/**
 * The service controller's housekeeping of this cluster's load balancers as a whole: learning the
 * cluster identity (the kube-system namespace UID) that tags them, sweeping balancers whose Service
 * is gone (created by a request in flight during a crash), finding balancers deleted outside the
 * CCM, and finding balancers changed outside it (drift). Each is one paginated list at most; the
 * controller decides when they run.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { ControllerContext } from "./manager.ts";
import type { LoadBalancers } from "../providers/provider.ts";
import { NAMESPACES } from "../kube/resources.ts";
import { logger } from "../lib/log.ts";

/** See the module doc. */
export class LoadBalancerHousekeeping {
  readonly #ctx: ControllerContext;
  readonly #lbs: LoadBalancers;
  readonly #log = logger("service");
  readonly #orphansDeleted;
  #clusterId?: string;

  constructor(ctx: ControllerContext, lbs: LoadBalancers) {
    this.#ctx = ctx;
    this.#lbs = lbs;
    this.#orphansDeleted = ctx.metrics.counter(
      "service_orphan_load_balancers_deleted_total",
      "Load balancers of this cluster deleted because their Service no longer exists.",
    );
  }

  /** Reads the cluster identity once and tells the provider; without it no orphan is ever swept. */
  async learnClusterId(): Promise<void> {
    if (!this.#lbs.sweepOrphans) return;
    try {
      this.#clusterId = (await this.#ctx.client.get(NAMESPACES, "kube-system")).metadata?.uid;
      if (this.#clusterId) this.#lbs.setClusterId?.(this.#clusterId);
    } catch (err) {
      this.#log.warning(
        "cannot read the kube-system namespace UID, so orphaned load balancers are not swept: {error}",
        { error: (err as Error).message },
      );
    }
  }

  /** Deletes this cluster's balancers whose Service is not among `liveServiceUids`. */
  async sweep(liveServiceUids: Set<string>): Promise<void> {
    if (!this.#clusterId || !this.#lbs.sweepOrphans) return;
    const deleted = await this.#lbs.sweepOrphans(this.#clusterId, liveServiceUids);
    if (deleted) {
      this.#orphansDeleted.inc({}, deleted);
      this.#log.warning("deleted {n} orphaned load balancer(s) whose Service no longer exists", {
        n: deleted,
      });
    }
  }

  /**
   * Drift repair's one list: the Services among `synced` whose balancer no longer exists, and those
   * whose balancer was changed outside the CCM (with what changed). Undefined: the provider cannot tell.
   */
  async drift(
    synced: Service[],
  ): Promise<{ missing: Service[]; drifted: { service: Service; differences: string[] }[] } | undefined> {
    if (!this.#lbs.checkDrift) return undefined;
    const report = await this.#lbs.checkDrift();
    if (!report) return undefined;
    const missing = synced.filter((svc) => !report.owners.has(svc.metadata!.uid!));
    const drifted = synced.flatMap((service) => {
      const differences = report.drifted.get(service.metadata!.uid!);
      return differences ? [{ service, differences }] : [];
    });
    return { missing, drifted };
  }

  /** The Services among `synced` whose balancer no longer exists (deleted outside the CCM). */
  async missing(synced: Service[]): Promise<Service[]> {
    if (synced.length === 0) return [];
    const owners = await this.#lbs.existingLoadBalancerOwners?.(synced.length);
    if (!owners) return [];
    return synced.filter((svc) => !owners.has(svc.metadata!.uid!));
  }
}
