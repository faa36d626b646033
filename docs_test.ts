/**
 * Everything the operator docs (README.md, docs/) name exists: every repository path, every
 * `deno task`, every `HCLOUD_*`/`ROBOT_*` variable the CCM reads (or one the docs say it does not),
 * and every chart value written as a dotted key.
 */
import { assert, assertEquals } from "./testing/assert.ts";
import { parse as parseYaml } from "yaml";
import { ENV_VARS } from "./config/env.ts";
import { environmentPage } from "./config/env_reference.ts";
import { flagsPage } from "./config/flags.ts";
import { annotationsPage } from "./providers/hcloud/mod.ts";
import { figureBlocks } from "./bench/figures.ts";
import { alertsPage, metricsPage } from "./hack/reference_pages.ts";

const ROOT = new URL(".", import.meta.url);
/** README.md, CONTRIBUTING.md and every page under docs/. */
function docPages(dir = "docs"): string[] {
  return [...Deno.readDirSync(new URL(`${dir}/`, ROOT))].flatMap((e) =>
    e.isDirectory ? docPages(`${dir}/${e.name}`) : e.name.endsWith(".md") ? [`${dir}/${e.name}`] : []
  );
}
const DOCS = ["README.md", "CONTRIBUTING.md", ...docPages()];
const TOP = new Set([...Deno.readDirSync(ROOT)].map((e) => e.name));

/** Variables the docs name that the CCM deliberately does not read (each says so where it is named). */
const NOT_READ = new Set<string>([]);

function code(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
}

function exists(path: string): boolean {
  try {
    Deno.statSync(new URL(path, ROOT));
    return true;
  } catch {
    return false;
  }
}

Deno.test("docs: every path, task, variable and chart value they name exists", async () => {
  const tasks = Object.keys(JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).tasks);
  const values = parseYaml(await Deno.readTextFile(new URL("chart/values.yaml", ROOT)));
  const problems: string[] = [];
  for (const doc of DOCS) {
    const text = await Deno.readTextFile(new URL(doc, ROOT));
    const blocks = [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");
    for (const token of code(text)) {
      for (const word of token.split(/[\s,()]+/)) {
        const path = word.replace(/[:.;]+$/, "").replace(/#.*$/, "");
        const top = path.split("/")[0];
        if (path.includes("/") && TOP.has(top) && !/[<>*{}$]/.test(path) && !exists(path)) {
          problems.push(`${doc}: path ${path}`);
        }
      }
    }
    for (const m of (text + "\n" + blocks).matchAll(/deno(?:@[\d.]+)? task ([a-z0-9:]+)/g)) {
      if (!tasks.includes(m[1])) problems.push(`${doc}: deno task ${m[1]}`);
    }
    for (const m of text.matchAll(/\b((?:HCLOUD|ROBOT)_[A-Z0-9_]*[A-Z0-9])\b/g)) {
      const name = m[1];
      if (!(ENV_VARS as readonly string[]).includes(name) && !NOT_READ.has(name)) {
        problems.push(`${doc}: variable ${name}`);
      }
    }
    for (const token of code(text)) {
      const key = token.replace(/[=:].*$/, "");
      const parts = key.split(".");
      if (parts.length < 2 || !/^[a-z][A-Za-z]*$/.test(parts[0]) || !(parts[0] in values)) continue;
      if (!parts.every((p) => /^[A-Za-z][A-Za-z0-9]*$/.test(p))) continue;
      let node = values;
      for (const part of parts) {
        if (node === null || typeof node !== "object" || !(part in node)) {
          problems.push(`${doc}: chart value ${key}`);
          break;
        }
        node = node[part];
      }
    }
  }
  assertEquals([...new Set(problems)], []);
});

Deno.test("docs: every variable the CCM reads appears by its full name", async () => {
  const text = (await Promise.all(DOCS.map((d) => Deno.readTextFile(new URL(d, ROOT))))).join("\n");
  const missing = ENV_VARS.filter((name) => !new RegExp(`\\b${name}\\b`).test(text));
  assertEquals(missing, []);
});

Deno.test("docs: the environment reference is config/env_reference.ts rendered", async () => {
  const page = await Deno.readTextFile(new URL("docs/reference/environment.md", ROOT)).catch(() => "");
  assertEquals(
    page === environmentPage(ENV_VARS),
    true,
    "docs/reference/environment.md is stale: run `deno task manifests`",
  );
});

Deno.test("docs: the flags reference is config/flags.ts rendered", async () => {
  const page = await Deno.readTextFile(new URL("docs/reference/flags.md", ROOT)).catch(() => "");
  assertEquals(page === flagsPage(), true, "docs/reference/flags.md is stale: run `deno task manifests`");
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
export function headingAnchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

Deno.test("docs: a heading's anchor is GitHub's", () => {
  assertEquals(
    headingAnchor("Per-port settings (`service.deno-ccm.io/port-<port>-<setting>`)"),
    "per-port-settings-servicedeno-ccmioport-port-setting",
  );
  assertEquals(headingAnchor("Where the image comes from"), "where-the-image-comes-from");
});

Deno.test("docs: every link between pages reaches a file, and an anchor a heading there", async () => {
  const problems: string[] = [];
  for (const doc of DOCS) {
    const text = await Deno.readTextFile(new URL(doc, ROOT));
    const prose = text.replace(/```[\s\S]*?```/g, "");
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/.test(target)) continue;
      const [file, anchor] = target.split("#");
      const url = file ? new URL(file, new URL(doc, ROOT)) : new URL(doc, ROOT);
      let stat: Deno.FileInfo;
      try {
        stat = await Deno.stat(url);
      } catch {
        problems.push(`${doc}: ${target} (no such file)`);
        continue;
      }
      if (!anchor) continue;
      const body = stat.isFile ? await Deno.readTextFile(url) : "";
      const anchors = [...body.replace(/```[\s\S]*?```/g, "").matchAll(/^#+ (.+)$/gm)].map((h) =>
        headingAnchor(h[1])
      );
      if (!anchors.includes(anchor)) problems.push(`${doc}: ${target} (no heading #${anchor})`);
    }
  }
  assertEquals(problems, []);
});

Deno.test("docs: the annotation, metric and alert references are their tables rendered", async () => {
  for (
    const [page, text] of [
      ["annotations", annotationsPage()],
      ["metrics", metricsPage()],
      ["alerts", alertsPage()],
    ]
  ) {
    const path = `docs/reference/${page}.md`;
    const written = await Deno.readTextFile(new URL(path, ROOT)).catch(() => "");
    assertEquals(written === text, true, `${path} is stale: run \`deno task manifests\``);
  }
});

/** The CCM's own code (not tests, tools or the simulator). */
function codeFiles(dir: string): string[] {
  return [...Deno.readDirSync(new URL(`${dir}/`, ROOT))].flatMap((e) =>
    e.isDirectory
      ? codeFiles(`${dir}/${e.name}`)
      : e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")
      ? [`${dir}/${e.name}`]
      : []
  );
}

Deno.test("docs: the events page names every reason the code records, and only those", async () => {
  const code = (await Promise.all(
    [...codeFiles("controllers"), ...codeFiles("providers"), ...codeFiles("kube"), "app.ts"].map((f) =>
      Deno.readTextFile(new URL(f, ROOT))
    ),
  )).join("\n");
  // The ways the code spells a reason: an event call, a warning or condition's `reason:`, a CSR
  // refusal, node IPAM's wait, a ternary of two.
  const recorded = new Set<string>();
  for (
    const pattern of [
      /"(?:Warning|Normal)",\s*"([A-Z][A-Za-z0-9]+)"/g,
      /reason: "([A-Z][A-Za-z0-9]+)"/g,
      /refuse\(\s*"([A-Z][A-Za-z0-9]+)"/g,
      /#wait\(\s*\w+,\s*"([A-Z][A-Za-z0-9]+)"/g,
      /reason = [^;\n]*\? "([A-Z][A-Za-z0-9]+)" : "([A-Z][A-Za-z0-9]+)"/g,
    ]
  ) for (const m of code.matchAll(pattern)) for (const r of m.slice(1)) recorded.add(r);
  const page = await Deno.readTextFile(new URL("docs/reference/events.md", ROOT));
  const documented = new Set([...page.matchAll(/`([A-Z][A-Za-z0-9]+)`/g)].map((m) => m[1]));
  assertEquals([...recorded].filter((r) => !documented.has(r)).sort(), [], "recorded but not on the page");
  const stale = [...documented].filter((r) => !code.includes(`"${r}"`));
  assertEquals(stale.sort(), [], "on the page but nowhere in the code");
  assertEquals(recorded.size > 40, true, `the scan finds the code's reasons (${recorded.size})`);
});

Deno.test("docs: the README's and the performance page's figures are bench/report.json's, each dated", async () => {
  const report = JSON.parse(await Deno.readTextFile(new URL("bench/report.json", ROOT)));
  const blocks = figureBlocks(report);
  /** A markdown table's rows as trimmed cells (what `deno fmt` pads is not compared). */
  const cells = (table: string) =>
    table.split("\n").filter((l) => l.startsWith("|") && !/^\|[\s|:-]+\|$/.test(l))
      .map((l) => l.slice(1, -1).split("|").map((c) => c.trim()));
  let seen = 0;
  for (const page of ["README.md", "docs/explanation/performance.md"]) {
    const text = await Deno.readTextFile(new URL(page, ROOT));
    for (const m of text.matchAll(/<!-- figures:(\w+) -->\n([\s\S]*?)<!-- \/figures:\1 -->/g)) {
      assertEquals(
        cells(m[2]),
        cells(blocks[m[1]]),
        `${page}: figures:${m[1]} is stale: run \`deno task manifests\``,
      );
      seen++;
    }
  }
  assertEquals(seen, 4, "the README's table and the performance page's three");
  // Every figure shown carries the day and commit it was measured on.
  for (const block of Object.values(blocks)) assert(!block.includes("undated"), block);
});
