import { assertEquals } from "../../../../testing/assert.ts";
import {
  allowedValues,
  OWN_ANNOTATION_REFERENCE,
  SERVICE_ANNOTATION_REFERENCE,
} from "./annotation_reference.ts";
import { ANNOTATIONS } from "./hccm_stage.ts";
import { PORT_ANNOTATION_PREFIX } from "./port_settings.ts";

const REPO = new URL("../../../../", import.meta.url);
/** Annotation keys of our domains and the ones kubelets and HCCM define, as the code spells them. */
const KEY =
  /"((?:service|node)\.deno-ccm\.io\/[a-z0-9-]+|instance\.hetzner\.cloud\/[a-z0-9-]+|alpha\.kubernetes\.io\/[a-z0-9-]+|service\.beta\.kubernetes\.io\/[a-z0-9-]+)"/g;
/** Labels the CCM writes on Nodes (the Node guide lists them), not annotations. */
const LABELS = new Set([
  "instance.hetzner.cloud/provided-by",
  "instance.hetzner.cloud/is-root-server",
  "node.deno-ccm.io/managed",
]);

function sources(dir: URL): URL[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    return e.isDirectory ? sources(url) : e.name.endsWith(".ts") && !e.name.endsWith("_test.ts") ? [url] : [];
  });
}

Deno.test("annotation reference: every annotation the CCM's code names has a line", () => {
  const files = [
    ...["providers/", "controllers/", "kube/"].flatMap((d) => sources(new URL(d, REPO))),
    new URL("app.ts", REPO),
  ];
  const named = new Set<string>();
  for (const f of files) for (const m of Deno.readTextFileSync(f).matchAll(KEY)) named.add(m[1]);
  const missing = [...named].filter((name) =>
    !LABELS.has(name) && !(name in OWN_ANNOTATION_REFERENCE) && name !== PORT_ANNOTATION_PREFIX
  );
  assertEquals(missing, []);
  assertEquals(named.size > 10, true, "the scan finds the code's annotations");
});

Deno.test("annotation reference: every checked official annotation shows what it may hold", () => {
  const unexplained = ANNOTATIONS.filter((name) => !allowedValues(name));
  assertEquals(unexplained, []);
  assertEquals(Object.keys(SERVICE_ANNOTATION_REFERENCE).length, ANNOTATIONS.length);
  assertEquals(allowedValues("health-check-interval"), "a duration (Go syntax or whole seconds), 3–60 s");
  assertEquals(allowedValues("health-check-retries"), "0–5");
});
