import { assertEquals } from "../../../../testing/assert.ts";
import { allowedValues, OWN_ANNOTATION_REFERENCE } from "./annotation_reference.ts";
import { ANNOTATIONS, SERVICE_ANNOTATIONS } from "./registry.ts";
import { PORT_ANNOTATION_PREFIX } from "./port_settings.ts";
import { namesInCode } from "../../../../testing/code_annotations.ts";

/** Labels the CCM writes or reads on Nodes (the Node guide lists them), not annotations. */
const LABELS = new Set([
  "instance.hetzner.cloud/provided-by",
  "instance.hetzner.cloud/is-root-server",
  "node.deno-ccm.io/managed",
]);

Deno.test("annotation reference: every annotation the CCM's code names has a line", () => {
  const named = namesInCode();
  const missing = named.filter((name) =>
    !LABELS.has(name) && !(name in OWN_ANNOTATION_REFERENCE) && name !== PORT_ANNOTATION_PREFIX
  );
  assertEquals(missing, []);
  assertEquals(named.length > 10, true, "the scan finds the code's annotations");
});

Deno.test("annotation reference: every checked official annotation shows what it may hold", () => {
  const unexplained = ANNOTATIONS.filter((name) => !allowedValues(name));
  assertEquals(unexplained, []);
  assertEquals(
    ANNOTATIONS.filter((name) => !SERVICE_ANNOTATIONS[name].meaning),
    [],
    "each says what it does",
  );
  assertEquals(allowedValues("health-check-interval"), "a duration (Go syntax or whole seconds), 3–60 s");
  assertEquals(allowedValues("health-check-retries"), "0–5");
});
