import type { Node, Taint } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { syncedTaintsPatch, withStartupTaints } from "./synced_taints.ts";

const P = "server.hetzner.cloud/";
const A = "node.deno-ccm.io/synced-taints";
const node = (taints: Taint[], written?: string): Node => ({
  metadata: {
    name: "n",
    annotations: written === undefined ? {} : { [A]: written } as Record<string, string>,
  },
  spec: { taints },
});

Deno.test("synced taints: written, changed and removed; others' taints untouched; in step is no write", () => {
  const gpu = { key: `${P}dedicated`, value: "gpu", effect: "NoSchedule" };
  const other = { key: "example.com/maintenance", effect: "NoExecute" };
  // First sync: added next to another taint, the key recorded.
  assertEquals(syncedTaintsPatch(node([other]), { prefix: P, taints: [gpu] }), {
    taints: [other, gpu],
    annotations: { [A]: `${P}dedicated` },
    conflicts: [],
  });
  // In step: nothing to write.
  assertEquals(
    syncedTaintsPatch(node([other, gpu], `${P}dedicated`), { prefix: P, taints: [gpu] }),
    undefined,
  );
  // The value changed in the cloud; then the label went.
  assertEquals(
    syncedTaintsPatch(node([other, gpu], `${P}dedicated`), { prefix: P, taints: [{ ...gpu, value: "fpga" }] })
      ?.taints,
    [other, { ...gpu, value: "fpga" }],
  );
  assertEquals(syncedTaintsPatch(node([other, gpu], `${P}dedicated`), { prefix: P, taints: [] }), {
    taints: [other],
    annotations: { [A]: null },
    conflicts: [],
  });
  // Not syncing taints: nothing, whatever the annotation says.
  assertEquals(syncedTaintsPatch(node([other, gpu], `${P}dedicated`), undefined), undefined);
});

Deno.test("synced taints: a forged record removes nothing outside the prefix; a taint someone else set is a conflict", () => {
  const uninit = {
    key: "node.cloudprovider.kubernetes.io/uninitialized",
    value: "true",
    effect: "NoSchedule",
  };
  const forged = node([uninit], `node.cloudprovider.kubernetes.io/uninitialized,${P}x`);
  assertEquals(syncedTaintsPatch(forged, { prefix: P, taints: [] })?.taints, [uninit]);
  const theirs = { key: `${P}dedicated`, value: "mine", effect: "NoExecute" };
  const patch = syncedTaintsPatch(node([theirs]), {
    prefix: P,
    taints: [{ key: `${P}dedicated`, value: "gpu", effect: "NoSchedule" }],
  });
  assertEquals(patch?.conflicts, [`${P}dedicated`]);
  assertEquals(patch?.taints, [theirs]);
});

Deno.test("startup taints: added once beside the Node's, never over a key it already has", () => {
  const setup = { key: "server.hetzner.cloud/setup", value: "pending", effect: "NoExecute" as const };
  const theirs = { key: "server.hetzner.cloud/setup", value: "done", effect: "NoSchedule" as const };
  const other = { key: "example.com/x", effect: "NoSchedule" as const };
  assertEquals(withStartupTaints([other], [setup]), [other, setup]);
  assertEquals(withStartupTaints([other, theirs], [setup]), [other, theirs], "the key is the Node's already");
  assertEquals(withStartupTaints([other], undefined), [other]);
});

Deno.test("startup taints: a record forged to name one makes the taint sync neither keep nor put it back", () => {
  // A kubelet writes the synced-taints record naming the startup taint it lifted, hoping the sync
  // brings it back (or, kept, that a later sync removes someone else's taint of that key).
  const node = {
    metadata: { annotations: { "node.deno-ccm.io/synced-taints": `${P}setup` } },
    spec: { taints: [] },
  } as Node;
  const patch = syncedTaintsPatch(node, {
    prefix: P,
    taints: [{ key: `${P}dedicated`, value: "gpu", effect: "NoSchedule" }],
  });
  assertEquals(patch?.taints, [{ key: `${P}dedicated`, value: "gpu", effect: "NoSchedule" }]);
  assertEquals(patch?.annotations, { "node.deno-ccm.io/synced-taints": `${P}dedicated` });
});
