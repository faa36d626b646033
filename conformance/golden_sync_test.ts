import { assertEquals, assertMatch, assertRejects } from "../testing/assert.ts";
import { formatReport, syncGolden } from "./golden_sync.ts";

const recorded = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, seed: {}, nodes: [], hccm_outcome: { phases: [] }, ...extra }, null, 2) + "\n";

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "golden-sync-" });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  return dir;
}

Deno.test("golden sync copies new and changed cases, reports what changed, keeps the rest", async () => {
  const source = await folder({
    "README.md": "new readme",
    "cases/a.json": recorded("a"),
    "cases/b.json": recorded("b", { env: { X: "1" } }),
    "cases/c.json": recorded("c"),
  });
  const copy = await folder({
    "README.md": "old readme",
    "cases/b.json": recorded("b"),
    "cases/c.json": recorded("c"),
    "cases/gone.json": recorded("gone"),
  });
  try {
    const dry = await syncGolden(source, copy, { dryRun: true });
    assertEquals(dry.added, ["a.json"]);
    assertEquals(await Deno.readTextFile(`${copy}/README.md`), "old readme", "a dry run writes nothing");

    const report = await syncGolden(source, copy);
    assertEquals(report.added, ["a.json"]);
    assertEquals([...report.changed], [["b.json", ["env"]]]);
    assertEquals(report.unchanged, 1);
    assertEquals(report.onlyInCopy, ["gone.json"]);
    assertEquals(report.readmeChanged, true);
    assertEquals(await Deno.readTextFile(`${copy}/cases/a.json`), recorded("a"));
    assertEquals(await Deno.readTextFile(`${copy}/cases/b.json`), recorded("b", { env: { X: "1" } }));
    assertEquals(await Deno.readTextFile(`${copy}/README.md`), "new readme");
    assertEquals(
      await Deno.readTextFile(`${copy}/cases/gone.json`),
      recorded("gone"),
      "kept without --prune",
    );
    const text = formatReport(report, false, false);
    assertEquals(text.split("\n")[0], "1 new, 1 changed, 1 unchanged, README changed");
    assertEquals(text.split("\n").at(-1), "next: deno task conformance --only a,b");

    const again = await syncGolden(source, copy, { prune: true });
    assertEquals([again.added.length, again.changed.size, again.unchanged], [0, 0, 3]);
    await assertRejects(() => Deno.stat(`${copy}/cases/gone.json`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(source, { recursive: true });
    await Deno.remove(copy, { recursive: true });
  }
});

Deno.test("golden sync copies nothing when one incoming file is not a recorded case", async () => {
  const source = await folder({
    "cases/a.json": recorded("a"),
    "cases/broken.json": '{"name": "broken"',
  });
  const copy = await folder({ "cases/keep.json": recorded("keep") });
  try {
    assertMatch(
      (await assertRejects(() => syncGolden(source, copy), Error)).message,
      /broken\.json: not JSON/,
    );
    await Deno.writeTextFile(
      `${source}/cases/broken.json`,
      JSON.stringify({ name: "other", seed: {}, nodes: [] }),
    );
    assertMatch((await assertRejects(() => syncGolden(source, copy), Error)).message, /not a recorded case/);
    await assertRejects(() => Deno.stat(`${copy}/cases/a.json`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(source, { recursive: true });
    await Deno.remove(copy, { recursive: true });
  }
});
