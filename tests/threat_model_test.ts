/**
 * Every annotation the CCM reads is an attack surface (a tenant writes Services, a kubelet its Node):
 * the threat model (docs/explanation/threat-model.md) must say, for each one, who writes it and what it lets them make the CCM
 * do. This test lists the annotations the code reads and fails on one the threat model does not cover,
 * so a new feature cannot skip it.
 */
import { assertEquals } from "../testing/assert.ts";
import { KNOWN_ANNOTATIONS, PREFIX } from "../providers/hcloud/mod.ts";
import { namesInCode } from "../testing/code_annotations.ts";

const REPO = new URL("..", import.meta.url);
/** Written by the CCM as labels, never read as annotations: not attack surface of this kind. */
const LABELS_WE_WRITE = new Set([
  "instance.hetzner.cloud/provided-by",
  "instance.hetzner.cloud/is-root-server",
]);

/** The annotation names the CCM's own code reads (not tests, tools or the simulator). */
function annotationsRead(): string[] {
  const found = new Set(KNOWN_ANNOTATIONS.map((a) => PREFIX + a));
  for (const name of namesInCode()) if (!LABELS_WE_WRITE.has(name)) found.add(name);
  return [...found].sort();
}

/** The names the threat model (docs/explanation/threat-model.md) covers (its tables name each in backticks). */
async function covered(): Promise<Set<string>> {
  const section = await Deno.readTextFile(new URL("docs/explanation/threat-model.md", REPO));
  const names = new Set<string>();
  // Full names, and Service annotations by their name after the prefix (the table says so).
  for (const m of section.matchAll(/`([a-z0-9.-]+\/[a-z0-9-]+|[a-z0-9-]+)`/g)) names.add(m[1]);
  return names;
}

Deno.test("threat model: every annotation the CCM reads says who writes it and what it allows", async () => {
  const model = await covered();
  const read = annotationsRead();
  const missing = read.filter((name) =>
    !model.has(name) && !(name.startsWith(PREFIX) && model.has(name.slice(PREFIX.length)))
  );
  assertEquals(
    missing,
    [],
    "annotations read by the code but not in the threat model (docs/explanation/threat-model.md)",
  );
  assertEquals(read.length > KNOWN_ANNOTATIONS.length, true, "the scan finds the Node annotations too");
});
