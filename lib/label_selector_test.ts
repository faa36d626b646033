import { assertEquals, assertThrows } from "../testing/assert.ts";
import { parseLabelSelector, validLabels } from "./label_selector.ts";

Deno.test("label selector: every operator", () => {
  const labels = { env: "prod", tier: "web", "hcloud-ccm/service-uid": "abc" };
  const m = (s: string) => parseLabelSelector(s).matches(labels);
  assertEquals(
    [
      "env=prod",
      "env==prod",
      "env!=dev",
      "tier in (web, db)",
      "tier notin (db)",
      "env",
      "!missing",
      "hcloud-ccm/service-uid=abc",
    ].map(m),
    [true, true, true, true, true, true, true, true],
  );
  assertEquals(
    ["env=dev", "env!=prod", "tier in (db)", "tier notin (web)", "missing", "!env", "env=prod,tier=db"].map(
      m,
    ),
    [
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ],
  );
  for (const bad of ["a b", "env=pr od", "=x", "env in x", "a,,b"]) {
    assertThrows(() => parseLabelSelector(bad), SyntaxError);
  }
  assertEquals([validLabels({ a: "b" }), validLabels({ "bad key": "x" }), validLabels([])], [
    true,
    false,
    false,
  ]);
});
