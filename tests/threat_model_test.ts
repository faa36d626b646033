/**
 * Every annotation the CCM reads is an attack surface (a tenant writes Services, a kubelet its Node):
 * the threat model (docs/explanation/threat-model.md) must say, for each one, who writes it and what it lets them make the CCM
 * do. This test lists the annotations the code reads and fails on one the threat model does not cover,
 * so a new feature cannot skip it.
 */
import { assertEquals } from "../testing/assert.ts";
import { KNOWN_ANNOTATIONS, PREFIX } from "../providers/hcloud/mod.ts";

const REPO = new URL("..", import.meta.url);
/** Annotation keys outside the Service prefix: our own domains and the ones kubelets and HCCM define. */
const KEY =
  /"((?:service|node)\.deno-ccm\.io\/[a-z0-9-]+|instance\.hetzner\.cloud\/[a-z0-9-]+|alpha\.kubernetes\.io\/[a-z0-9-]+|service\.beta\.kubernetes\.io\/[a-z0-9-]+)"/g;
/** Written by the CCM as labels, never read as annotations: not attack surface of this kind. */
const LABELS_WE_WRITE = new Set([
  "instance.hetzner.cloud/provided-by",
  "instance.hetzner.cloud/is-root-server",
]);

async function sources(dir: URL, out: URL[] = []): Promise<URL[]> {
  for await (const e of Deno.readDir(dir)) {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) await sources(url, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) out.push(url);
  }
  return out;
}

/** The annotation names the CCM's own code reads (not tests, tools or the simulator). */
async function annotationsRead(): Promise<string[]> {
  const found = new Set(KNOWN_ANNOTATIONS.map((a) => PREFIX + a));
  const files = [
    ...await sources(new URL("providers/", REPO)),
    ...await sources(new URL("controllers/", REPO)),
    ...await sources(new URL("kube/", REPO)),
    new URL("app.ts", REPO),
  ];
  for (const file of files) {
    for (const m of (await Deno.readTextFile(file)).matchAll(KEY)) {
      if (!LABELS_WE_WRITE.has(m[1])) found.add(m[1]);
    }
  }
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
  const read = await annotationsRead();
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
