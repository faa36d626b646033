/**
 * The repository's copy of Hetzner's OpenAPI spec is the one its notes describe: the sha256 in
 * `hcloud_api/SOURCE.md` and in the generated types' header match the file, so a changed spec cannot
 * slip in without its source note and regenerated types.
 */
import { assertEquals, assertMatch } from "../testing/assert.ts";

const DIR = new URL(".", import.meta.url);

async function sha256(url: URL): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(url));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("the OpenAPI spec copy matches its source note and the generated types", async () => {
  const actual = await sha256(new URL("openapi.json", DIR));
  const note = await Deno.readTextFile(new URL("SOURCE.md", DIR));
  assertMatch(note, new RegExp(`sha256: \`${actual}\``));
  const header = (await Deno.readTextFile(new URL("api_types.ts", DIR)))
    .split("\n").slice(0, 8).join("\n");
  assertEquals(
    header.match(/sha256 ([0-9a-f]{64})/)?.[1],
    actual,
    "regenerate with hcloud_api/gen.ts",
  );
});
