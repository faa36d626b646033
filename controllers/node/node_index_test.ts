import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { NodeIndex } from "./node_index.ts";

const node = (name: string, providerID: string | undefined, ...addresses: [string, string][]): Node => ({
  metadata: { name },
  spec: providerID ? { providerID } : {},
  status: { addresses: addresses.map(([type, address]) => ({ type, address })) },
});

Deno.test("node index: a change moves a Node to its new keys; a deletion removes it; hostnames are not indexed", () => {
  const index = new NodeIndex();
  index.update(node("a", "hcloud://1", ["InternalIP", "10.0.0.2"], ["Hostname", "a"]));
  index.update(node("b", "hcloud://1", ["InternalIP", "10.0.0.2"], ["ExternalIP", "198.18.0.2"]));
  assertEquals(index.withProviderID("hcloud://1").sort(), ["a", "b"]);
  assertEquals(index.withAddress("10.0.0.2").sort(), ["a", "b"]);
  assertEquals(index.withAddress("a"), [], "a Hostname is no traffic address");

  index.update(node("b", "hcloud://2", ["InternalIP", "10.0.0.3"]));
  assertEquals(
    [index.withProviderID("hcloud://1"), index.withProviderID("hcloud://2"), index.withAddress("10.0.0.2")],
    [["a"], ["b"], ["a"]],
  );
  assertEquals(index.withAddress("198.18.0.2"), [], "an address the Node no longer has");

  index.remove(node("a", undefined));
  assertEquals([index.withProviderID("hcloud://1"), index.withAddress("10.0.0.2")], [[], []]);
  index.update(node("c", undefined));
  assertEquals(index.withProviderID(""), [], "no provider ID, not indexed");
});
