/**
 * Finding a Service's load balancer, and the ownership rule for taking over a same-named one: by
 * the Service's UID label first; a same-named balancer only when no live owner claims it (made by
 * this cluster, proven by its cluster label, for a Service that no longer exists, and for this
 * Service's namespace and name when its labels say so; or made outside this cluster — no owner
 * label, or one without this cluster's mark — with the Service's explicit `adopt-existing: "true"`
 * and the namespace's consent). Anything else is refused with a message naming the
 * balancer and its owner, and never changed.
 *
 * A name is also refused, before anything is created or taken over, when another live Service has the stronger claim
 * to it (issue 33, probe N6: a tenant naming another Service's balancer would otherwise take the
 * name the moment that balancer is lost, and lock its Service out): the name derived from a
 * Service's own UID is always its own; between two Services annotating one name, the one that has
 * been served (ingress in its status) wins, then the older one, then (created in the same second)
 * the first by `namespace/name`: a rule that gives the same winner on every run.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { ProviderError, TerminalError } from "../../../errors.ts";
import type { HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import { defaultLoadBalancerName, type LoadBalancerSpec } from "../spec/mod.ts";
import {
  CLUSTER_ID_LABEL,
  madeForAnother,
  SERVICE_NAMESPACE_LABEL,
  SERVICE_UID_LABEL,
} from "../core/labels.ts";
import { ExternalObjectConsent } from "../core/consent.ts";
import { sharedName } from "../sharing/mod.ts";
import { LB_ANNOTATION_PREFIX, SHARE_ANNOTATION, SHARE_LABEL } from "../../names.ts";
import type { ClusterFacts } from "../core/cluster_facts.ts";

/** A refusal that leaves the Service without a balancer of its own (the controller stops advertising). */
function noBalancer(err: Error): Error {
  return ProviderError.with(err, { leftNoBalancer: true });
}

type LB = Schemas["load_balancer"];

/** How long a prefetched answer may stand in for a Service's own lookup. */
export const PREFETCH_MAX_AGE_MS = 30_000;

/** See the module doc. */
export class LbLookup {
  /** Balancers by owner UID from one prefetch, each answering that Service's next lookup once. */
  #prefetched = new Map<string, { at: number; lbs: LB[] }>();

  /** `facts`: the cluster's identity and Services (unknown Services: every UID exists, none rivals). */
  constructor(
    private readonly client: HcloudClient,
    private readonly facts: ClusterFacts,
    private readonly consent: ExternalObjectConsent = new ExternalObjectConsent(),
    private readonly now: () => number = () => 0,
  ) {}

  /**
   * One list of every balancer that names an owner Service, before the syncs of `services` (a start
   * syncs every Service, and each sync looks its balancer up): a Service found in it gets that
   * answer at its next lookup, within {@link PREFETCH_MAX_AGE_MS}; one not found is looked up as
   * always (a create rests on a lookup of its own). Never reads more pages than the lookups it
   * replaces; a list cut short answers nothing (a second balancer of one Service could be on a page
   * not read, and that is an error a lookup reports).
   */
  async prefetch(services: Service[]): Promise<void> {
    const uids = new Set(services.map((s) => s.metadata?.uid).filter((u): u is string => !!u));
    if (uids.size < 2) return;
    const at = this.now();
    const found = new Map<string, LB[]>();
    for (let page = 1;; page++) {
      if (page >= uids.size) return; // as dear as the lookups: leave them
      const data = await this.client.call(
        "list load balancers",
        this.client.api.GET("/load_balancers", {
          params: { query: { label_selector: SERVICE_UID_LABEL, page, per_page: 50 } },
        }),
      );
      for (const lb of data.load_balancers) {
        const uid = lb.labels?.[SERVICE_UID_LABEL];
        if (uid && uids.has(uid)) found.set(uid, [...found.get(uid) ?? [], lb]);
      }
      const next = data.meta?.pagination?.next_page;
      if (!next || next <= page) break;
    }
    for (const [uid, lbs] of found) this.#prefetched.set(uid, { at, lbs });
  }

  /** The balancer labelled with the Service's UID (more than one is an error to fix by hand). */
  async findByUid(service: Service): Promise<LB | undefined> {
    const uid = service.metadata?.uid;
    if (!uid) return undefined;
    const hit = this.#prefetched.get(uid);
    this.#prefetched.delete(uid);
    const fresh = hit && this.now() - hit.at < PREFETCH_MAX_AGE_MS;
    const data = fresh ? { load_balancers: hit.lbs } : await this.client.call(
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
    const rival = () => {
      const claim = rivalClaim(name, service, this.facts.services() ?? [], this.facts.clusterId());
      if (!claim) return;
      throw noBalancer(
        new TerminalError(
          `load balancer name "${name}" is claimed by Service ${claim.who} (${claim.why}); nothing was ` +
            "created or changed. Choose another name with the annotation load-balancer.hetzner.cloud/name",
        ),
      );
    };
    if (!found) {
      rival();
      return undefined;
    }
    const owner = found.labels?.[SERVICE_UID_LABEL];
    const otherCluster = found.labels?.[CLUSTER_ID_LABEL];
    const share = found.labels?.[SHARE_LABEL];
    // A refusal leaves the Service without a balancer of its own (the controller stops advertising).
    const refuse = (why: string) => {
      throw noBalancer(
        new TerminalError(
          `load balancer "${name}" (ID ${found.id}) exists and ${why}; it is left unchanged. Choose another ` +
            `name with the annotation load-balancer.hetzner.cloud/name`,
        ),
      );
    };
    const ours = this.facts.clusterId();
    if (otherCluster && ours && otherCluster !== ours) {
      refuse(`belongs to another cluster (${CLUSTER_ID_LABEL}=${otherCluster})`);
    }
    if (share !== undefined) {
      refuse(
        `is shared by the Services of namespace ${
          found.labels?.[SERVICE_NAMESPACE_LABEL]
        } (share key "${share}")`,
      );
    }
    if (owner) {
      if (this.facts.serviceExists(owner)) refuse(`belongs to another Service (UID ${owner})`);
      const other = madeForAnother(found.labels, service);
      if (other) {
        refuse(`was made for Service ${other}, which is gone; only a Service of that name takes it over`);
      }
      // Its Service is gone: a recreated Service takes it over (one its labels name, whatever others
      // claim), if this cluster made it. Without our cluster's mark, an owner label proves nothing (a
      // label anyone with the token writes, or the official CCM of another cluster): made outside (P11).
      if (ours && otherCluster === ours) {
        if (!found.labels?.[SERVICE_NAMESPACE_LABEL]) rival();
        return found;
      }
    }
    if (!spec.adoptExisting) {
      refuse(
        (owner
          ? `carries the owner label of Service UID ${owner}, which is not in this cluster, and no ` +
            `${CLUSTER_ID_LABEL} of this cluster (made by another cluster's CCM, or before a restore?)`
          : "carries no owner label (made outside Kubernetes?)") +
          "; to take it over, and replace its services and targets, annotate the Service with " +
          'load-balancer.hetzner.cloud/adopt-existing: "true"',
      );
    }
    rival();
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

const NAME_ANNOTATION = `${LB_ANNOTATION_PREFIX}name`;

/**
 * The live Service with a stronger claim to the balancer name `name` than `service`, if any (see
 * the module doc). Reads the name annotation directly: this runs only when a Service has no
 * balancer of its own yet, once per other Service.
 */
export function rivalClaim(
  name: string,
  service: Service,
  services: Service[],
  clusterId?: string,
): { who: string; why: string } | undefined {
  const uid = service.metadata?.uid;
  if (defaultLoadBalancerName(service) === name) return undefined; // its own, whoever else names it
  const served = (s: Service) => (s.status?.loadBalancer?.ingress ?? []).length > 0;
  const created = (s: Service) => s.metadata?.creationTimestamp ?? "";
  for (const other of services) {
    const annotations = other.metadata?.annotations ?? {};
    if (other.metadata?.uid === uid || other.spec?.type !== "LoadBalancer") continue;
    const who = `${other.metadata?.namespace ?? "default"}/${other.metadata?.name}`;
    const share = annotations[SHARE_ANNOTATION];
    // A shared balancer's default name is its namespace's (probe P3), whoever names it first.
    if (share && clusterId && !annotations[NAME_ANNOTATION]) {
      if (sharedName(other.metadata?.namespace ?? "default", share, clusterId) === name) {
        return { who, why: `the default name of its namespace's shared balancer (key "${share}")` };
      }
    }
    // No balancer of its own.
    if (annotations[`${LB_ANNOTATION_PREFIX}attach-to`] || share) continue;
    if (defaultLoadBalancerName(other) === name) return { who, why: "the name made from its UID" };
    if (annotations[NAME_ANNOTATION] !== name) continue;
    if (served(other) && !served(service)) return { who, why: "it is served under that name" };
    if (served(other) !== served(service)) continue;
    const [a, b] = [created(other), created(service)];
    if (a < b) return { who, why: `it is older: created ${a}, this Service ${b || "later"}` };
    // Created in the same second (timestamps have no finer grain): not by UID, which is random and
    // flips between runs, but by namespace/name, which both can see and which never changes.
    if (a === b && who < `${service.metadata?.namespace ?? "default"}/${service.metadata?.name}`) {
      return {
        who,
        why: `both were created at ${a || "an unknown time"}; a tie goes to the first by namespace/name`,
      };
    }
  }
  return undefined;
}
