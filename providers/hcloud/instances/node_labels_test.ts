import { assertEquals } from "../../../testing/assert.ts";
import { nodeTaintsFromServer, parseServerTaintPatterns } from "./node_labels.ts";

Deno.test("server taints: patterns with effects; labels become taints named as labels are", () => {
  const errors: string[] = [];
  const patterns = parseServerTaintPatterns("dedicated:NoExecute, spot*", errors)!;
  assertEquals(errors, []);
  assertEquals(patterns, [{ pattern: "dedicated", effect: "NoExecute" }, {
    pattern: "spot*",
    effect: "NoSchedule",
  }]);
  assertEquals(
    nodeTaintsFromServer({ dedicated: "gpu", "spot-pool": "", team: "x" }, patterns, "server.hetzner.cloud"),
    [
      { key: "server.hetzner.cloud/dedicated", value: "gpu", effect: "NoExecute" },
      { key: "server.hetzner.cloud/spot-pool", effect: "NoSchedule" },
    ],
  );
  parseServerTaintPatterns("a:Sometimes,b c", errors);
  assertEquals(errors, [
    'HCLOUD_INSTANCES_SERVER_TAINTS: "a:Sometimes": the effect is not one of NoSchedule, PreferNoSchedule, NoExecute',
    'HCLOUD_INSTANCES_SERVER_TAINTS: "b c" is not a label key (or a key prefix ending in *)',
  ]);
});
