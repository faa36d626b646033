import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { type ResolvedBalancer, ServerLabeler } from "./server_labeler.ts";
import type { HcloudClient } from "./client.ts";
import type { ServerCache } from "./server_cache.ts";

/** A labeler whose cache only counts full lists (a repair starts with one). */
function labeler() {
  let fullLists = 0;
  const cache = {
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
