/**
 * Shared balancers (`service.deno-ccm.io/load-balancer-share: <key>`): the Services of one namespace
 * that name the same key serve their ports on one balancer, made by the first and deleted with the
 * last. Targets belong to the whole balancer, so it targets this cluster's eligible Nodes with the
 * cluster's label selector (draining and exclusions apply as for any balancer); settings of the
 * whole balancer must agree (a digest on the balancer), ports must not collide. Ownership is on the
 * balancer (shared_record.ts), so restarts, crashes between writes and Services deleted while the
 * CCM is down converge: finalizers bring each deletion here, and each Service leaves exactly what
 * the labels say is its own.
 *
 * Writes to one namespace's shared balancers are serialized in this process (label updates replace
 * the whole map); only the leader writes.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerResult } from "../../../provider.ts";
import { ProviderError, TerminalError } from "../../../errors.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import type { ActionWaiter, HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import { type DesiredService, ingressOf } from "../core/desired.ts";
import type { ConfiguredNetwork, HcloudContext } from "../../context.ts";
import type { ServerLabeler } from "../../servers/mod.ts";
import { type LbAction, planExposure, planLabelTarget, planServices, planShape } from "../core/plan.ts";
import { executeLbAction } from "../core/actions.ts";
import { createLoadBalancer, reconcileNetwork } from "../core/create.ts";
import type { CatalogCache } from "../core/catalog_cache.ts";
import {
  SERVICE_NAMESPACE_LABEL,
  SHARE_ANNOTATION,
  SHARE_LABEL,
  SHARE_SETTINGS_LABEL,
  SHARED_STATE,
} from "../../names.ts";
import {
  otherMembers,
  planJoin,
  planLeave,
  portLabel,
  portOwners,
  settingsDigest,
  sharedLabels,
  sharedName,
  shareSelector,
  wholeSettingsDiffering,
} from "./shared_record.ts";
import type { ClusterFacts } from "../core/cluster_facts.ts";
import { fetchBalancer } from "../core/fetch.ts";

type LB = Schemas["load_balancer"];

export { SHARED_STATE };

/** What a member asked of its shared balancer at its last sync (for drift repair). */
export interface SharedAsk {
  name: string;
  services: DesiredService[];
  selector: string;
  usePrivateIp: boolean;
}

/** Joins and leaves shared balancers for the hcloud load balancers (see the module doc). */
export class SharedBalancers {
  readonly #client: HcloudClient;
  readonly #waiter: ActionWaiter;
  readonly #network: ConfiguredNetwork;
  readonly #labeler: ServerLabeler;
  readonly #catalog: CatalogCache;
  /** Service UID → the shared balancer it serves on (members synced by this process). */
  readonly members = new Map<string, number>();
  /** Balancer ID → member UID → what it asked for. */
  readonly asked = new Map<number, Map<string, SharedAsk>>();
  /** Namespace → the tail of its queue of writes. */
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #facts: ClusterFacts;

  /** `facts`: the cluster whose balancers these are (shared balancers need its identity). */
  constructor(ctx: HcloudContext, labeler: ServerLabeler, catalog: CatalogCache, facts: ClusterFacts) {
    this.#facts = facts;
    this.#client = ctx.client;
    this.#waiter = ctx.actions;
    this.#network = ctx.network;
    this.#labeler = labeler;
    this.#catalog = catalog;
  }

  /** Serves `desired` for `service` on the balancer of its share key, creating it when there is none. */
  async ensure(
    service: Service,
    spec: LoadBalancerSpec,
    desired: DesiredService[],
    nodes: Node[],
  ): Promise<LoadBalancerResult> {
    const clusterId = this.#facts.clusterId();
    const key = spec.share!;
    if (!clusterId) {
      throw new Error(
        `annotation ${SHARE_ANNOTATION}: the cluster identity (the kube-system namespace UID) is not known yet`,
      );
    }
    const namespace = service.metadata?.namespace ?? "default";
    const me = service.metadata!.name!;
    const selector = this.#labeler.selector(clusterId);
    // Taken before any await (see ServerLabeler); applied once the input has been checked.
    this.#labeler.want(clusterId, nodes);
    const digest = await settingsDigest(spec);
    const record = { clusterId, namespace, key, digest, name: me };
    return await this.#serialized(namespace, async () => {
      const listed = await this.#list(clusterId, namespace);
      // A Service that changed its key leaves the balancers of its old one once the new one can take
      // it (a refused join changes nothing: it keeps serving where it was), before it joins.
      const leaveOld = async () => {
        for (const other of listed.filter((lb) => lb.labels?.[SHARE_LABEL] !== key)) {
          await this.#leave(other, me);
        }
      };
      let lb = listed.filter((x) => x.labels?.[SHARE_LABEL] === key).sort((a, b) => a.id - b.id)[0];
      if (lb) {
        const others = otherMembers(lb, me);
        if (lb.labels?.[SHARE_SETTINGS_LABEL] !== digest && others.length) {
          throw refused(
            `its settings of the whole balancer (${wholeSettingsDiffering(spec, lb)}) differ from those of ` +
              `${serviceList(namespace, others)}, which share load balancer ${lb.name} under key "${key}"; ` +
              "the settings of a shared balancer must be the same on every Service",
          );
        }
        const taken = planJoin(lb, me, desired, { selector, usePrivateIp: spec.usePrivateIp }).taken;
        if (taken.length) {
          throw refused(
            taken.map((t) => `port ${t.port} is served by Service ${namespace}/${t.owner}`).join(", ") +
              ` on load balancer ${lb.name} (share key "${key}"); choose another port`,
          );
        }
        const othersPorts = [...portOwners(lb.labels).values()].filter((o) => o !== me).length;
        await this.#checkLimit(spec, lb, othersPorts + desired.length, namespace, others);
        await leaveOld();
        await this.#labeler.apply();
        if (lb.labels?.[SHARE_SETTINGS_LABEL] !== digest) {
          // Its only member changed them: the balancer follows, as an unshared one would.
          const labels = { ...sharedLabels(spec.labels, record, []) };
          await this.#run(lb, planShape(lb, spec, { labels }));
          await reconcileNetwork(this.#client, this.#waiter, lb, spec, this.#network.id);
          await this.#run(lb, planExposure(lb, spec));
          lb = await fetchBalancer(this.#client, lb.id) ?? lb;
        }
        const plan = planJoin(lb, me, desired, { selector, usePrivateIp: spec.usePrivateIp });
        let changed = false;
        if (plan.claim) changed = await this.#run(lb, [{ kind: "update", labels: plan.claim }]);
        changed = (await this.#run(lb, plan.actions)) || changed;
        if (plan.release) {
          changed = (await this.#run(lb, [{ kind: "update", labels: plan.release }])) || changed;
        }
        if (changed) lb = await fetchBalancer(this.#client, lb.id) ?? lb;
      } else {
        await this.#checkLimit(spec, undefined, desired.length, namespace, []);
        await leaveOld();
        await this.#labeler.apply();
        lb = await createLoadBalancer(this.#client, this.#waiter, {
          name: spec.name ?? sharedName(namespace, key, clusterId),
          owner: sharedLabels({}, record, desired.map((d) => d.listen_port)),
          spec,
          services: desired,
          serverIds: [],
          selector,
          networkId: this.#network.id,
        });
        // What creation cannot set: a fixed private IP or subnet, reverse DNS, delete protection.
        let changed = await reconcileNetwork(this.#client, this.#waiter, lb, spec, this.#network.id);
        changed = (await this.#run(lb, planShape(lb, spec, { labels: lb.labels ?? {} }))) || changed;
        changed = (await this.#run(lb, planExposure(lb, spec))) || changed;
        if (changed) lb = await fetchBalancer(this.#client, lb.id) ?? lb;
      }
      const uid = service.metadata!.uid!;
      this.#forget(uid);
      this.members.set(uid, lb.id);
      const asks = this.asked.get(lb.id) ?? new Map<string, SharedAsk>();
      asks.set(uid, { name: me, services: desired, selector, usePrivateIp: spec.usePrivateIp });
      this.asked.set(lb.id, asks);
      return { ingress: ingressOf(lb, spec), annotations: { [SHARED_STATE]: key } };
    });
  }

  /** Takes `service` off every shared balancer of its namespace (deleting one it was the last on). */
  /** Takes the Service's ports off its shared balancers; says what happened, for the event. */
  async release(service: Service): Promise<string | undefined> {
    const clusterId = this.#facts.clusterId();
    this.#forget(service.metadata!.uid!);
    if (!clusterId) return undefined;
    const namespace = service.metadata?.namespace ?? "default";
    return await this.#serialized(namespace, async () => {
      const done: string[] = [];
      for (const lb of await this.#list(clusterId, namespace)) {
        const words = await this.#leave(lb, service.metadata!.name!);
        if (words) done.push(words);
      }
      return done.length ? done.join("; ") : undefined;
    });
  }

  /** The balancer `service` serves on, if any (for `getLoadBalancer`). */
  async find(service: Service, key: string): Promise<Schemas["load_balancer"] | undefined> {
    const clusterId = this.#facts.clusterId();
    if (!clusterId) return undefined;
    const listed = await this.#list(clusterId, service.metadata?.namespace ?? "default", key);
    return listed.find((lb) => [...portOwners(lb.labels).values()].includes(service.metadata!.name!));
  }

  /** What differs on a listed shared balancer from what its members asked, by member UID. */
  drift(lb: Schemas["load_balancer"]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [uid, ask] of this.asked.get(lb.id) ?? []) {
      const words = sharedDriftOf(lb, ask);
      if (words.length) out.set(uid, words);
    }
    return out;
  }

  /** Leaves `lb`; says what happened (undefined: nothing of `me` was on it). */
  async #leave(lb: LB, me: string): Promise<string | undefined> {
    const plan = planLeave(lb, me);
    if (!plan.mine) return undefined;
    if (plan.deleteBalancer) {
      // Delete protection wins, as for a Service's own balancer: it stays, with everything on it.
      if (lb.protection?.delete) return `Kept shared load balancer ${lb.name}: delete protection is on`;
      this.asked.delete(lb.id);
      try {
        await this.#client.call(
          "delete load balancer",
          this.#client.api.DELETE("/load_balancers/{id}", { params: { path: { id: lb.id } } }),
        );
      } catch (err) {
        if (!(err instanceof CloudApiError && err.status === 404)) throw err;
      }
      return `Deleted shared load balancer ${lb.name} (the last Service on it)`;
    }
    await this.#run(lb, plan.actions);
    await this.#run(lb, [{ kind: "update", labels: plan.labels! }]);
    const staying = [...new Set([...portOwners(lb.labels).values()].filter((o) => o !== me))].sort();
    return `Removed the Service's ports from shared load balancer ${lb.name}; it stays for ` +
      serviceList(lb.labels?.[SERVICE_NAMESPACE_LABEL] ?? "default", staying);
  }

  #forget(uid: string): void {
    const id = this.members.get(uid);
    this.members.delete(uid);
    if (id !== undefined) this.asked.get(id)?.delete(uid);
  }

  async #checkLimit(
    spec: LoadBalancerSpec,
    lb: LB | undefined,
    ports: number,
    namespace: string,
    others: string[],
  ): Promise<void> {
    const type = lb?.load_balancer_type?.name ?? spec.type ?? "lb11";
    const max = (await this.#catalog.get()).loadBalancerTypes.get(type)?.max_services;
    if (max === undefined || ports <= max) return;
    throw refused(
      `${ports} ports to serve on the shared balancer${
        others.length ? ` with ${serviceList(namespace, others)}` : ""
      }, but load balancer type ${type} allows ${max} services: choose a larger type for all of them`,
    );
  }

  async #list(clusterId: string, namespace: string, key?: string): Promise<LB[]> {
    return await this.#client.listAll<LB, LB>(
      "list shared load balancers",
      "load_balancers",
      (page) =>
        this.#client.api.GET("/load_balancers", {
          params: { query: { label_selector: shareSelector(clusterId, namespace, key), page, per_page: 50 } },
        }),
      (lb) => lb,
    );
  }

  async #run(lb: LB, actions: LbAction[]): Promise<boolean> {
    for (const action of actions) await executeLbAction(this.#client, this.#waiter, lb.id, action);
    return actions.length > 0;
  }

  /** Runs `work` after the namespace's earlier writes (a failure does not stop the queue). */
  #serialized<T>(namespace: string, work: () => Promise<T>): Promise<T> {
    const before = this.#queues.get(namespace) ?? Promise.resolve();
    const run = before.catch(() => {}).then(work);
    const tail = run.catch(() => {});
    this.#queues.set(namespace, tail);
    tail.then(() => {
      if (this.#queues.get(namespace) === tail) this.#queues.delete(namespace);
    });
    return run;
  }
}

/** A member's part of a shared balancer, against what it asked: its ports, its claims and the target. */
export function sharedDriftOf(lb: LB, ask: SharedAsk): string[] {
  const words: string[] = [];
  for (const action of planServices(lb, ask.services)) {
    if (action.kind === "add_service") words.push(`service on port ${action.service.listen_port} deleted`);
    if (action.kind === "update_service") words.push(`service on port ${action.service.listen_port} changed`);
  }
  if (ask.services.some((s) => lb.labels?.[portLabel(s.listen_port)] !== ask.name)) {
    words.push("labels changed");
  }
  if (planLabelTarget(lb, ask.selector, ask.usePrivateIp).some((a) => a.kind === "add_target")) {
    words.push("target removed");
  }
  return words;
}

/**
 * Whether a live Service (in `live`) of the balancer's namespace, naming its key, owns a port on it:
 * the orphan sweep deletes a shared balancer none serves on (left by a crash or a lost finalizer).
 */
export function sharedAlive(labels: Record<string, string>, services: Service[], live: Set<string>): boolean {
  const members = new Set(portOwners(labels).values());
  return services.some((s) =>
    live.has(s.metadata?.uid ?? "") && s.metadata?.namespace === labels[SERVICE_NAMESPACE_LABEL] &&
    members.has(s.metadata?.name ?? "") && s.metadata?.annotations?.[SHARE_ANNOTATION] === labels[SHARE_LABEL]
  );
}

/** `ns/a, ns/b`, for messages. */
function serviceList(namespace: string, names: string[]): string {
  return `Service${names.length > 1 ? "s" : ""} ${names.map((n) => `${namespace}/${n}`).join(", ")}`;
}

/** A join refused: nothing was changed in the cloud for it; the members keep working. */
function refused(why: string): ProviderError {
  return new ProviderError(
    new TerminalError(`annotation ${SHARE_ANNOTATION}: not joined, nothing changed: ${why}`),
  );
}
