/**
 * This cluster's load balancers as a whole (by the cluster-id label): the orphan sweep, and the
 * check that every Service's balancer still exists. Both read small pages cut down as they arrive:
 * a label-selector balancer lists every matched server with its health, ~120 kB at 1000 Nodes, so
 * 50 of them in one page cost 30 MB to parse.
 *
 * @module
 */
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import type { components, HcloudClient } from "../../../../hcloud_api/mod.ts";

type Schemas = components["schemas"];
import { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "../core/labels.ts";
import { SHARE_LABEL } from "../../names.ts";

/** Orphans younger than this may still be in the middle of their first sync. */
const ORPHAN_MIN_AGE_MS = 60_000;

/** The fields of a listed load balancer the orphan sweep reads, and what it keeps of them. */
interface SweptRaw {
  id: number;
  labels?: Record<string, string>;
  protection?: { delete?: boolean };
  created: string;
}
interface Swept {
  id: number;
  uid?: string;
  /** A shared balancer's labels (it has no one owner). */
  shared?: Record<string, string>;
  protected: boolean;
  created: number;
}

/**
 * Deletes this cluster's unprotected balancers older than a minute whose Service is not among
 * `liveServiceUids` (created by a request in flight during a crash), and shared balancers for
 * which `sharedAlive` (given their labels) says no live Service serves on them. Returns how many went.
 */
export async function sweepOrphans(
  client: HcloudClient,
  clusterId: string,
  liveServiceUids: Set<string>,
  sharedAlive: (labels: Record<string, string>) => boolean = () => true,
  now: () => number = Date.now,
): Promise<number> {
  const all = await client.listAllStreamed<SweptRaw, Swept>(
    "list load balancers",
    "load_balancers",
    (page, streamed) =>
      client.api.GET("/load_balancers", {
        params: { query: { label_selector: `${CLUSTER_ID_LABEL}=${clusterId}`, page, per_page: 50 } },
        ...streamed,
      }),
    (lb) => ({
      id: lb.id,
      uid: lb.labels?.[SERVICE_UID_LABEL],
      shared: lb.labels?.[SHARE_LABEL] === undefined ? undefined : lb.labels,
      protected: lb.protection?.delete === true,
      created: Date.parse(lb.created),
    }),
  );
  let deleted = 0;
  for (const lb of all) {
    const orphan = lb.shared ? !sharedAlive(lb.shared) : lb.uid !== undefined && !liveServiceUids.has(lb.uid);
    if (!orphan || lb.protected) continue;
    if (!(now() - lb.created >= ORPHAN_MIN_AGE_MS)) continue; // young, or no valid `created`
    try {
      await client.call(
        "delete orphaned load balancer",
        client.api.DELETE("/load_balancers/{id}", { params: { path: { id: lb.id } } }),
      );
      deleted++;
    } catch (err) {
      if (!(err instanceof CloudApiError && err.status === 404)) throw err;
    }
  }
  return deleted;
}

/**
 * One request counts this cluster's balancers (a page of one); only when fewer exist than
 * `expected` are they listed, to tell whose are missing. Undefined: none is missing. The one
 * balancer that page holds goes to `sample` (its label-selector target shows which servers carry
 * the target label, at no extra request).
 */
export async function existingOwners(
  client: HcloudClient,
  clusterId: string,
  expected: number,
  sample?: (lb: Schemas["load_balancer"]) => void,
  members?: (lb: { id: number; labels?: Record<string, string> }) => string[],
): Promise<Set<string> | undefined> {
  const label_selector = `${CLUSTER_ID_LABEL}=${clusterId}`;
  const first = await client.call(
    "count load balancers",
    client.api.GET("/load_balancers", { params: { query: { label_selector, per_page: 1 } } }),
  );
  if (first.load_balancers?.[0]) sample?.(first.load_balancers[0]);
  const total = first.meta?.pagination?.total_entries;
  if (typeof total === "number" && total >= expected) return undefined;
  // A shared balancer has no one owner: `members` names the Services on it.
  const owners = await client.listAllStreamed<{ id: number; labels?: Record<string, string> }, string[]>(
    "list load balancers",
    "load_balancers",
    (page, streamed) =>
      client.api.GET("/load_balancers", {
        params: { query: { label_selector, page, per_page: 50 } },
        ...streamed,
      }),
    (lb) => [lb.labels?.[SERVICE_UID_LABEL] ?? "", ...members?.(lb) ?? []],
  );
  return new Set(owners.flat().filter(Boolean));
}
