import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { SYNCED_LABELS_ANNOTATION as A, syncedLabelsPatch } from "./synced_labels.ts";

const node = (labels: Record<string, string>, written?: string): Node => ({
  metadata: { labels, annotations: written === undefined ? {} : { [A]: written } as Record<string, string> },
});

Deno.test("synced labels: written, updated, removed; someone else's label never touched", () => {
  assertEquals(syncedLabelsPatch(node({}), {}), undefined);
  assertEquals(syncedLabelsPatch(node({}), { "s/team": "a" }), {
    labels: { "s/team": "a" },
    annotations: { [A]: "s/team" },
    conflicts: [],
  });
  assertEquals(syncedLabelsPatch(node({ "s/team": "a" }, "s/team"), { "s/team": "a" }), undefined, "in step");
  assertEquals(syncedLabelsPatch(node({ "s/team": "a" }, "s/team"), { "s/team": "b" }), {
    labels: { "s/team": "b" },
    annotations: {},
    conflicts: [],
  });
  assertEquals(syncedLabelsPatch(node({ "s/team": "a", other: "x" }, "s/team"), {}), {
    labels: { "s/team": null },
    annotations: { [A]: null },
    conflicts: [],
  });
  // A label the CCM did not write, under a wanted key: left alone and reported.
  assertEquals(syncedLabelsPatch(node({ "s/team": "mine" }), { "s/team": "a" }), {
    labels: {},
    annotations: {},
    conflicts: ["s/team"],
  });
});
