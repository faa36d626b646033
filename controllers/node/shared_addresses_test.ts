import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { sharedAddresses } from "./shared_addresses.ts";
import { NodeIndex } from "./node_index.ts";

const node = (name: string, ...addresses: [string, string][]): Node => ({
  metadata: { name },
  status: { addresses: addresses.map(([type, address]) => ({ type, address })) },
});

Deno.test("shared addresses: an InternalIP or ExternalIP another Node has is named with that Node", () => {
  const nodes = new NodeIndex();
  nodes.update(node("worker-1", ["InternalIP", "10.0.0.3"], ["ExternalIP", "198.18.0.2"], ["Hostname", "h"]));
  nodes.update(node("worker-3", ["InternalIP", "10.0.0.5"]));
  assertEquals(
    sharedAddresses("worker-3", [
      { type: "Hostname", address: "h" },
      { type: "InternalIP", address: "10.0.0.3" },
      { type: "ExternalIP", address: "198.18.0.9" },
    ], nodes),
    [{ type: "InternalIP", address: "10.0.0.3", nodes: ["worker-1"] }],
  );
  assertEquals(
    sharedAddresses("worker-3", [{ type: "InternalIP", address: "10.0.0.5" }], nodes),
    [],
    "its own",
  );
});
