/**
 * Keeps the load-balancer target label on exactly the servers of this cluster's eligible Nodes.
 * Every label-selector load balancer targets that label, so a Node joining or leaving costs one
 * server update, whatever the number of Services.
 *
 * The label's value is the cluster's identity (the kube-system namespace UID), so two clusters in one
 * project never select, label or unlabel each other's servers. The label is only ever removed
 * where it carries our identity. After every server list (the address refresh, say) the labels are
 * checked against that list and repaired, so a third party rewriting server labels (a Terraform
 * `labels` block) is undone at the next full list, or sooner: the balancers that drift repair lists
 * (or the lost-balancer check, without it) show which servers their label selector resolves (see
 * {@link ServerLabeler.checkResolved}).
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { HcloudClient } from "../../../hcloud_api/mod.ts";
import type { ServerCache, ServerSnapshot } from "./cache.ts";
import { parseProviderId } from "../provider_id.ts";
import { logger } from "../../../lib/log.ts";
import { TARGET_LABEL } from "../names.ts";

export { TARGET_LABEL };

/** What {@link ServerLabeler.checkResolved} reads of a load balancer. */
export interface ResolvedBalancer {
  /** The balancer's ID. */
  id: number;
  /** Its type, for the target limit. */
  load_balancer_type?: { max_targets?: number };
  /** Its targets, label selectors with what they resolved to. */
  targets: {
    type: string;
    label_selector?: { selector: string };
    targets?: { server?: { id: number } }[];
  }[];
}

/** See the module doc. */
export class ServerLabeler {
  readonly #log = logger("hcloud", "labels");
  /** The newest wanted state: whoever asked last wins, whenever its turn comes. */
  #latest?: { identity: string; wanted: Set<number> };
  /**
   * The wanted state the labels were last found or set right for (every wanted server seen). Asking
   * again for it reads nothing: every later list is checked anyway (see the constructor).
   */
  #settled?: { identity: string; wanted: Set<number> };
  /** A repair from a fresh full list is waiting its turn (see {@link checkResolved}). */
  #repairQueued = false;
  #tail: Promise<void> = Promise.resolve();

  /** Labels servers through `client`, following the snapshots of `cache`. */
  constructor(private readonly client: HcloudClient, private readonly cache: ServerCache) {
    cache.onSnapshot((snapshot) => {
      if (this.#latest) void this.#enqueue(snapshot).catch(() => {});
    });
  }

  /** The label selector load balancers of the cluster `identity` use. */
  selector(identity: string): string {
    return `${TARGET_LABEL}=${identity}`;
  }

  /**
   * Makes the servers of `nodes` (and only those) carry the label. The wanted set is taken now, so
   * a caller that got here first with an older node set can never undo a newer one.
   */
  sync(identity: string, nodes: Node[]): Promise<void> {
    this.want(identity, nodes);
    return this.apply();
  }

  /** Records the wanted servers now (see {@link sync}) without labelling yet. */
  want(identity: string, nodes: Node[]): void {
    const wanted = new Set<number>();
    for (const node of nodes) {
      const parsed = parseProviderId(node.spec?.providerID);
      if (parsed.kind === "cloud") wanted.add(parsed.id);
    }
    this.#latest = { identity, wanted };
  }

  /**
   * Compares the servers a label-selector balancer resolves with the wanted ones; on a difference
   * (someone rewrote server labels: no action records that) repairs from a fresh full list. The
   * balancer comes from a read made anyway, so the check itself costs nothing.
   */
  checkResolved(lb: ResolvedBalancer): void {
    const latest = this.#latest;
    if (!latest) return;
    const target = lb.targets.find((t) =>
      t.type === "label_selector" && t.label_selector?.selector === this.selector(latest.identity)
    );
    if (!target) return;
    const resolved = new Set((target.targets ?? []).map((t) => t.server?.id));
    // Above the type's target limit the API may list only as many as fit (the simulator does): then
    // every listed server must be wanted and the listing full, but not every wanted server is listed.
    const others = lb.targets.filter((t) => t.type !== "label_selector").length;
    const room = Math.max(0, (lb.load_balancer_type?.max_targets ?? Infinity) - others);
    const expected = Math.min(room, latest.wanted.size);
    const same = resolved.size >= expected &&
      [...resolved].every((id) => id !== undefined && latest.wanted.has(id));
    if (same) return;
    this.#log.info("load balancer {id} resolves {n} server(s) by label, {wanted} wanted: checking labels", {
      id: lb.id,
      n: resolved.size,
      wanted: latest.wanted.size,
    });
    // One repair for however many balancers show the difference (a drift page holds dozens).
    if (this.#repairQueued) return;
    this.#repairQueued = true;
    void this.#enqueue(undefined, true).catch(() => {});
  }

  /**
   * Labels according to the newest wanted set, after any pass already running. A set already settled
   * costs nothing (the service controller's periodic node sync and every Service's sync ask again).
   */
  apply(): Promise<void> {
    const run = this.#tail.then(() => {
      const latest = this.#latest;
      if (latest && this.#settled && sameWanted(latest, this.#settled)) return;
      return this.#sync();
    });
    this.#tail = run.catch(() => {});
    return run;
  }

  /** Runs one pass after the previous one; `snapshot` given: check against it without listing. */
  #enqueue(snapshot?: ServerSnapshot, fullList = false): Promise<void> {
    const run = this.#tail.then(async () => {
      if (fullList) this.#repairQueued = false;
      await this.#sync(
        snapshot ??
          (fullList ? await this.cache.get({ full: true, notBefore: this.cache.now() }) : undefined),
      );
    });
    this.#tail = run.catch(() => {});
    return run;
  }

  async #sync(given?: ServerSnapshot): Promise<void> {
    const latest = this.#latest;
    if (!latest) return;
    const { identity, wanted } = latest;
    this.#settled = undefined; // until this pass has finished
    let snapshot = given ?? await this.cache.get();
    // A just-initialized server may be newer than the snapshot: list once more (not for repairs,
    // which must never cause a list of their own).
    if (!given && [...wanted].some((id) => !snapshot.byId.has(id))) {
      snapshot = await this.cache.get({ notBefore: this.cache.now(), full: true });
    }
    const complete = [...wanted].every((id) => snapshot.byId.has(id));
    let changed = 0;
    for (const server of snapshot.all) {
      const value = server.labels[TARGET_LABEL];
      const want = wanted.has(server.id);
      // Another cluster's label (or anyone else's value) on a server that is not ours stays.
      if (want ? value === identity : value !== identity) continue;
      const labels = { ...server.labels };
      if (want) labels[TARGET_LABEL] = identity;
      else delete labels[TARGET_LABEL];
      await this.client.call(
        "label server",
        this.client.api.PUT("/servers/{id}", { params: { path: { id: server.id } }, body: { labels } }),
      );
      server.labels = labels; // keep the snapshot truthful until the next list
      changed++;
      this.#log.debug("{action} {label} on server {id}", {
        action: want ? "set" : "removed",
        label: TARGET_LABEL,
        id: server.id,
      });
    }
    this.#settled = complete ? latest : undefined;
    if (changed) {
      this.#log.info("load-balancer target label set right on {changed} server(s); {n} eligible", {
        changed,
        n: wanted.size,
      });
    }
  }
}

/** The same identity and the same wanted servers. */
function sameWanted(
  a: { identity: string; wanted: Set<number> },
  b: { identity: string; wanted: Set<number> },
): boolean {
  return a === b || (a.identity === b.identity && a.wanted.size === b.wanted.size &&
    [...a.wanted].every((id) => b.wanted.has(id)));
}
