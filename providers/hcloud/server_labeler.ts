/**
 * Keeps the load-balancer target label on exactly the servers of eligible Nodes. Every load
 * balancer targets that label, so a Node joining or leaving costs one server update, whatever the
 * number of Services.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { HcloudClient } from "./client.ts";
import type { ServerCache } from "./server_cache.ts";
import { parseProviderId } from "./instances.ts";
import { logger } from "../../lib/log.ts";

/** The label key; its value is the cluster name (`--cluster-name`). */
export const TARGET_LABEL = "deno-ccm/lb-target";

/** See the module doc. */
export class ServerLabeler {
  readonly #log = logger("hcloud", "labels");
  constructor(private readonly client: HcloudClient, private readonly cache: ServerCache) {}

  /** The label selector load balancers use for `cluster`. */
  selector(cluster: string): string {
    return `${TARGET_LABEL}=${cluster}`;
  }

  #tail: Promise<void> = Promise.resolve();

  /**
   * Adds the label to the servers of `nodes` and removes it from every other server that has it.
   * Calls run one after another, so parallel Service syncs never update the same server twice.
   */
  sync(cluster: string, nodes: Node[]): Promise<void> {
    const run = this.#tail.then(() => this.#sync(cluster, nodes));
    this.#tail = run.catch(() => {});
    return run;
  }

  async #sync(cluster: string, nodes: Node[]): Promise<void> {
    const wanted = new Set<number>();
    for (const node of nodes) {
      const parsed = parseProviderId(node.spec?.providerID);
      if (parsed.kind === "cloud") wanted.add(parsed.id);
    }
    let snapshot = await this.cache.get();
    // A just-initialized server may be newer than the snapshot: list once more.
    if ([...wanted].some((id) => !snapshot.byId.has(id))) {
      snapshot = await this.cache.get({ notBefore: Date.now() });
    }
    let changed = false;
    for (const server of snapshot.all) {
      const has = server.labels[TARGET_LABEL] === cluster;
      if (has === wanted.has(server.id)) continue;
      const labels = { ...server.labels };
      if (has) delete labels[TARGET_LABEL];
      else labels[TARGET_LABEL] = cluster;
      await this.client.call(
        "label server",
        this.client.api.PUT("/servers/{id}", { params: { path: { id: server.id } }, body: { labels } }),
      );
      server.labels = labels; // keep the snapshot truthful until the next list
      changed = true;
      this.#log.debug("{action} {label} on server {id}", {
        action: has ? "removed" : "added",
        label: TARGET_LABEL,
        id: server.id,
      });
    }
    if (changed) {
      this.#log.info("load-balancer target labels updated for {n} eligible servers", { n: wanted.size });
    }
  }
}
