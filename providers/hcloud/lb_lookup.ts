/**
 * Finding a Service's load balancer, and the ownership rule for taking over a same-named one: by
 * the Service's UID label first; a same-named balancer only when no live owner claims it (labelled
 * for a Service that no longer exists in this cluster and not tagged by another cluster, or with no
 * owner label at all and the Service's explicit `adopt-existing: "true"`). Anything else is refused
 * with a message naming the balancer and its owner, and never changed.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { markNoBalancer, TerminalError } from "../errors.ts";
import type { HcloudClient, Schemas } from "./client.ts";
import type { LoadBalancerSpec } from "./lb_annotations.ts";
import { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "./lb_labels.ts";
import { ExternalObjectConsent } from "./lb_consent.ts";

function noBalancer(err: Error): Error {
  markNoBalancer(err);
  return err;
}

type LB = Schemas["load_balancer"];

/** See the module doc. */
export class LbLookup {
  /** Whether a Service UID exists in this cluster; until the controller says, every UID does (safe). */
  serviceExists: (uid: string) => boolean = () => true;

  constructor(
    private readonly client: HcloudClient,
    private readonly clusterId: () => string | undefined,
    private readonly consent: ExternalObjectConsent = new ExternalObjectConsent(),
  ) {}

  /** The balancer labelled with the Service's UID (more than one is an error to fix by hand). */
  async findByUid(service: Service): Promise<LB | undefined> {
    const uid = service.metadata?.uid;
    if (!uid) return undefined;
    const data = await this.client.call(
      "find load balancer",
      this.client.api.GET("/load_balancers", {
        params: { query: { label_selector: `${SERVICE_UID_LABEL}=${uid}` } },
      }),
    );
    if (data.load_balancers.length > 1) {
      throw new TerminalError(
        `${data.load_balancers.length} load balancers carry ${SERVICE_UID_LABEL}=${uid}; remove the extra ones`,
      );
    }
    return data.load_balancers[0];
  }

  /** The Service's balancer, or the same-named one it may take over (see the module doc). */
  async findOwned(name: string, service: Service, spec: LoadBalancerSpec): Promise<LB | undefined> {
    const own = await this.findByUid(service);
    if (own) return own;
    const found = await this.#findByName(name);
    if (!found) return undefined;
    const owner = found.labels?.[SERVICE_UID_LABEL];
    const otherCluster = found.labels?.[CLUSTER_ID_LABEL];
    // A refusal leaves the Service without a balancer of its own (the controller stops advertising).
    const refuse = (why: string) => {
      throw noBalancer(
        new TerminalError(
          `load balancer "${name}" (ID ${found.id}) exists and ${why}; it is left unchanged. Choose another ` +
            `name with the annotation load-balancer.hetzner.cloud/name`,
        ),
      );
    };
    const ours = this.clusterId();
    if (otherCluster && ours && otherCluster !== ours) {
      refuse(`belongs to another cluster (${CLUSTER_ID_LABEL}=${otherCluster})`);
    }
    if (owner) {
      if (this.serviceExists(owner)) refuse(`belongs to another Service (UID ${owner})`);
      return found; // its Service is gone: a recreated Service takes it over
    }
    if (!spec.adoptExisting) {
      refuse(
        "carries no owner label (made outside Kubernetes?); to take it over, and replace its services and " +
          'targets, annotate the Service with load-balancer.hetzner.cloud/adopt-existing: "true"',
      );
    }
    try {
      this.consent.check(service, found, `load balancer "${name}" (ID ${found.id})`);
    } catch (err) {
      throw noBalancer(err as Error);
    }
    return found;
  }

  /** One balancer, fresh. */
  async get(id: number): Promise<LB> {
    return (await this.client.call(
      "get load balancer",
      this.client.api.GET("/load_balancers/{id}", { params: { path: { id } } }),
    ))
      .load_balancer;
  }

  async #findByName(name: string): Promise<LB | undefined> {
    const data = await this.client.call(
      "find load balancer",
      this.client.api.GET("/load_balancers", { params: { query: { name } } }),
    );
    return data.load_balancers[0];
  }
}
