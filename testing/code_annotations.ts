/**
 * The annotation (and label) names the CCM's own code spells out (not tests, tools or the
 * simulator): our domains and those kubelets and the official CCM define. The annotation reference
 * and the threat model are each checked against this list.
 *
 * @module
 */

const REPO = new URL("../", import.meta.url);
const KEY =
  /"((?:service|node)\.deno-ccm\.io\/[a-z0-9-]+|instance\.hetzner\.cloud\/[a-z0-9-]+|alpha\.kubernetes\.io\/[a-z0-9-]+|service\.beta\.kubernetes\.io\/[a-z0-9-]+)"/g;

function sources(dir: URL): URL[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    return e.isDirectory ? sources(url) : e.name.endsWith(".ts") && !e.name.endsWith("_test.ts") ? [url] : [];
  });
}

/** Every such name in providers/, controllers/, kube/ and app.ts, sorted. */
export function namesInCode(): string[] {
  const files = [
    ...["providers/", "controllers/", "kube/"].flatMap((d) => sources(new URL(d, REPO))),
    new URL("app.ts", REPO),
  ];
  const found = new Set<string>();
  for (const f of files) for (const m of Deno.readTextFileSync(f).matchAll(KEY)) found.add(m[1]);
  return [...found].sort();
}
