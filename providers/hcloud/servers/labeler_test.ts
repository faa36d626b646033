import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../../testing/assert.ts";
import { type ResolvedBalancer, ServerLabeler } from "./labeler.ts";
import type { HcloudClient } from "../../../hcloud_api/mod.ts";
import type { ServerCache } from "./cache.ts";
import type { ServerSnapshot } from "./snapshot.ts";

/** A labeler whose cache only counts full lists (a repair starts with one). */
function labeler() {
  let fullLists = 0;
  const cache = {
    now: () => Date.now(),
    onSnapshot: () => {},
    get: (o: { full?: boolean }) => {
      if (o?.full) fullLists++;
      return Promise.reject(new Error("not needed here"));
    },
  } as unknown as ServerCache;
  const l = new ServerLabeler({} as HcloudClient, cache);
  const nodes: Node[] = [1, 2, 3, 4].map((id) => ({
    metadata: { name: `n${id}` },
    spec: { providerID: `hcloud://${id}` },
  }));
  l.want("c1", nodes);
  return { l, fullLists: async () => (await new Promise((r) => setTimeout(r, 10)), fullLists) };
}
function lb(resolved: number[], maxTargets?: number): ResolvedBalancer {
  return {
    id: 1,
    load_balancer_type: { max_targets: maxTargets },
    targets: [{
      type: "label_selector",
      label_selector: { selector: "deno-ccm/lb-target=c1" },
      targets: resolved.map((id) => ({ server: { id } })),
    }],
  };
}

Deno.test("server labeler: a balancer resolving what is wanted needs no repair, also when capped by its type", async () => {
  const cases: [string, ResolvedBalancer, number][] = [
    ["all four resolved", lb([1, 2, 3, 4]), 0],
    ["a type for 2 targets lists 2 wanted ones", lb([1, 2], 2), 0],
    ["one label lost below the limit", lb([1, 2, 3]), 1],
    ["a server labelled that is not wanted", lb([1, 2, 3, 4, 9]), 1],
    ["capped, but one listed is not wanted", lb([1, 9], 2), 1],
  ];
  for (const [name, balancer, repairs] of cases) {
    const { l, fullLists } = labeler();
    l.checkResolved(balancer);
    assertEquals(await fullLists(), repairs, name);
  }
});

/** A labeler over servers 1-5 of which 1-4 carry the label; counts reads of the cache and label writes. */
function settledLabeler() {
  const servers = [1, 2, 3, 4, 5].map((id) => ({
    id,
    labels: id <= 4 ? { "deno-ccm/lb-target": "c1" } : {},
  }));
  const snapshot = {
    at: Date.now(),
    full: true,
    all: servers,
    byId: new Map(servers.map((s) => [s.id, s])),
  } as unknown as ServerSnapshot;
  let reads = 0;
  let writes = 0;
  const cache = {
    now: () => Date.now(),
    onSnapshot: () => {},
    get: () => (reads++, Promise.resolve(snapshot)),
  } as unknown as ServerCache;
  const client = {
    api: { PUT: () => Promise.resolve({}) },
    call: () => (writes++, Promise.resolve({})),
  } as unknown as HcloudClient;
  const nodes = (ids: number[]): Node[] =>
    ids.map((id) => ({ metadata: { name: `n${id}` }, spec: { providerID: `hcloud://${id}` } }));
  return {
    l: new ServerLabeler(client, cache),
    nodes,
    counts: () => ({ reads, writes }),
  };
}

Deno.test("server labeler: a node set already labelled is not read again; a new one is", async () => {
  const { l, nodes, counts } = settledLabeler();
  await l.sync("c1", nodes([1, 2, 3, 4]));
  assertEquals(counts(), { reads: 1, writes: 0 }, "checked once against a list");
  await l.sync("c1", nodes([4, 3, 2, 1]));
  await l.apply();
  assertEquals(counts(), { reads: 1, writes: 0 }, "the same set again costs nothing");
  await l.sync("c1", nodes([1, 2, 3, 4, 5]));
  assertEquals(counts(), { reads: 2, writes: 1 }, "a Node joined: read, and its server labelled");
});

Deno.test("server labeler: many balancers showing a difference cause one repair", async () => {
  const { l, fullLists } = labeler();
  for (let i = 0; i < 5; i++) l.checkResolved(lb([1, 2, 3]));
  assertEquals(await fullLists(), 1);
});
