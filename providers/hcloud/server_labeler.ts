/**
 * Keeps the load-balancer target label on exactly the servers of this cluster's eligible Nodes.
 * Every label-selector load balancer targets that label, so a Node joining or leaving costs one
 * server update, whatever the number of Services.
 *
 * The label's value is the cluster's identity (the kube-system namespace UID), so two clusters in one
 * project never select, label or unlabel each other's servers. The label is only ever removed
 * where it carries our identity. After every server list (the address refresh, say) the labels are
 * checked against that list and repaired, so a third party rewriting server labels (a Terraform
 * `labels` block) is undone within one refresh period at no extra read.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { HcloudClient } from "./client.ts";
import type { ServerCache, ServerSnapshot } from "./server_cache.ts";
import { parseProviderId } from "./instances.ts";
import { logger } from "../../lib/log.ts";

/** The label key; its value is the cluster identity (kube-system UID). */
export const TARGET_LABEL = "deno-ccm/lb-target";

/** See the module doc. */
export class ServerLabeler {
  readonly #log = logger("hcloud", "labels");
  /** The newest wanted state: whoever asked last wins, whenever its turn comes. */
  #latest?: { identity: string; wanted: Set<number> };
  #tail: Promise<void> = Promise.resolve();

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

  /** Labels according to the newest wanted set, after any pass already running. */
  apply(): Promise<void> {
    return this.#enqueue();
  }

  /** Runs one pass after the previous one; `snapshot` given: check against it without listing. */
  #enqueue(snapshot?: ServerSnapshot): Promise<void> {
    const run = this.#tail.then(() => this.#sync(snapshot));
    this.#tail = run.catch(() => {});
    return run;
  }

  async #sync(given?: ServerSnapshot): Promise<void> {
    const latest = this.#latest;
    if (!latest) return;
    const { identity, wanted } = latest;
    let snapshot = given ?? await this.cache.get();
    // A just-initialized server may be newer than the snapshot: list once more (not for repairs,
    // which must never cause a list of their own).
    if (!given && [...wanted].some((id) => !snapshot.byId.has(id))) {
      snapshot = await this.cache.get({ notBefore: Date.now() });
    }
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
    if (changed) {
      this.#log.info("load-balancer target label set right on {changed} server(s); {n} eligible", {
        changed,
        n: wanted.size,
      });
    }
  }
}
