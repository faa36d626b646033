import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { SYNCED_LABELS_ANNOTATION as A, syncedLabelsPatch } from "./synced_labels.ts";

const s = (labels: Record<string, string>) => ({ prefix: "s/", labels });
const node = (labels: Record<string, string>, written?: string): Node => ({
  metadata: { labels, annotations: written === undefined ? {} : { [A]: written } as Record<string, string> },
});

Deno.test("synced labels: written, updated, removed; someone else's label never touched", () => {
  assertEquals(syncedLabelsPatch(node({}), s({})), undefined);
  assertEquals(syncedLabelsPatch(node({}), s({ "s/team": "a" })), {
    labels: { "s/team": "a" },
    annotations: { [A]: "s/team" },
    conflicts: [],
  });
  assertEquals(
    syncedLabelsPatch(node({ "s/team": "a" }, "s/team"), s({ "s/team": "a" })),
    undefined,
    "in step",
  );
  assertEquals(syncedLabelsPatch(node({ "s/team": "a" }, "s/team"), s({ "s/team": "b" })), {
    labels: { "s/team": "b" },
    annotations: {},
    conflicts: [],
  });
  assertEquals(syncedLabelsPatch(node({ "s/team": "a", other: "x" }, "s/team"), s({})), {
    labels: { "s/team": null },
    annotations: { [A]: null },
    conflicts: [],
  });
  // A label the CCM did not write, under a wanted key: left alone and reported.
  assertEquals(syncedLabelsPatch(node({ "s/team": "mine" }), s({ "s/team": "a" })), {
    labels: {},
    annotations: {},
    conflicts: ["s/team"],
  });
});

Deno.test("synced labels: a forged record removes nothing outside the prefix, nothing when the sync is off", () => {
  const forged = node(
    { "kubernetes.io/hostname": "w2", "node-role.kubernetes.io/control-plane": "", "s/team": "a" },
    "kubernetes.io/hostname,node-role.kubernetes.io/control-plane,s/team",
  );
  assertEquals(syncedLabelsPatch(forged, undefined), undefined, "sync off: the record is not even read");
  assertEquals(syncedLabelsPatch(forged, s({})), {
    labels: { "s/team": null },
    annotations: { [A]: null },
    conflicts: [],
  });
  // A wanted key outside the prefix is never written either.
  assertEquals(syncedLabelsPatch(node({}), s({ "node-role.kubernetes.io/x": "" })), undefined);
});
