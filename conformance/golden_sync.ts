/**
 * `deno task golden:sync [SOURCE] [--prune] [--dry-run]`: copies new or changed recordings of the
 * official CCM into the repository's copy (`conformance/hccm_golden/`) and reports what changed. The
 * tests and `deno task conformance` only ever read the repository's copy; this is the one command
 * that reads a folder outside the repository.
 *
 * SOURCE is a folder laid out like the copy (`README.md`, `cases/*.json`); by default the recordings
 * folder the team keeps beside the checkout. Every incoming case must parse as a case, or nothing is
 * written. Cases only in the repository's copy are kept (listed), or removed with `--prune`.
 *
 * @module
 */
import { parseArgs } from "node:util";

/** What a sync found (and, unless a dry run, did). */
export interface SyncReport {
  added: string[];
  /** Case name → the top-level fields that differ. */
  changed: Map<string, string[]>;
  unchanged: number;
  /** In the repository's copy but not in the source: kept, or removed with `prune`. */
  onlyInCopy: string[];
  readmeChanged: boolean;
}

/** The repository's copy of the recordings. */
export const GOLDEN_COPY = new URL("hccm_golden", import.meta.url).pathname;
/** Where the team's recordings arrive, relative to the repository (the only path outside it we name). */
const DEFAULT_SOURCE = new URL("../../shared/hccm-golden", import.meta.url).pathname;

/** Compares SOURCE with the copy and, unless `dryRun`, brings the copy up to date. */
export async function syncGolden(
  source: string,
  copy: string,
  options: { prune?: boolean; dryRun?: boolean } = {},
): Promise<SyncReport> {
  const incoming = await readCases(`${source}/cases`, true);
  const current = await readCases(`${copy}/cases`, false);
  const report: SyncReport = {
    added: [],
    changed: new Map(),
    unchanged: 0,
    onlyInCopy: [],
    readmeChanged: false,
  };
  for (const [file, text] of incoming) {
    const old = current.get(file);
    if (old === undefined) report.added.push(file);
    else if (old !== text) report.changed.set(file, changedFields(old, text));
    else report.unchanged++;
  }
  report.onlyInCopy = [...current.keys()].filter((f) => !incoming.has(f)).sort();
  const readme = await readOptional(`${source}/README.md`);
  report.readmeChanged = readme !== undefined && readme !== await readOptional(`${copy}/README.md`);
  report.added.sort();
  if (options.dryRun) return report;
  await Deno.mkdir(`${copy}/cases`, { recursive: true });
  for (const file of [...report.added, ...report.changed.keys()]) {
    await Deno.writeTextFile(`${copy}/cases/${file}`, incoming.get(file)!);
  }
  if (report.readmeChanged) await Deno.writeTextFile(`${copy}/README.md`, readme!);
  if (options.prune) { for (const file of report.onlyInCopy) await Deno.remove(`${copy}/cases/${file}`); }
  return report;
}

/** `name.json` → text; with `strict`, each must be a case (name, seed, nodes and HCCM's outcome). */
async function readCases(dir: string, strict: boolean): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (err) {
    if (!strict && err instanceof Deno.errors.NotFound) return out;
    throw new Error(`${dir}: cannot read the recordings (${(err as Error).message})`);
  }
  for (const e of entries) {
    if (!e.isFile || !e.name.endsWith(".json")) continue;
    const text = await Deno.readTextFile(`${dir}/${e.name}`);
    if (strict) {
      let c: Record<string, unknown>;
      try {
        c = JSON.parse(text);
      } catch (err) {
        throw new Error(`${dir}/${e.name}: not JSON (${(err as Error).message}); nothing copied`);
      }
      if (c.name !== e.name.replace(/\.json$/, "") || !c.seed || !Array.isArray(c.nodes) || !c.hccm_outcome) {
        throw new Error(
          `${dir}/${e.name}: not a recorded case (needs name = file name, seed, nodes, hccm_outcome); nothing copied`,
        );
      }
    }
    out.set(e.name, text);
  }
  if (strict && out.size === 0) throw new Error(`${dir}: no cases; nothing copied`);
  return out;
}

function changedFields(oldText: string, newText: string): string[] {
  const a = JSON.parse(oldText) as Record<string, unknown>;
  const b = JSON.parse(newText) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const fields = keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
  return fields.length ? fields : ["(formatting only)"];
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** The report as a person reads it. */
export function formatReport(r: SyncReport, prune: boolean, dryRun: boolean): string {
  const verb = dryRun ? "would copy" : "copied";
  const lines = [
    `${r.added.length} new, ${r.changed.size} changed, ${r.unchanged} unchanged` +
    (r.readmeChanged ? ", README changed" : ""),
  ];
  for (const f of r.added) lines.push(`  new      ${f} (${verb})`);
  for (const [f, fields] of r.changed) lines.push(`  changed  ${f}: ${fields.join(", ")} (${verb})`);
  for (const f of r.onlyInCopy) {
    lines.push(
      `  only in the repository's copy: ${f} (${prune ? (dryRun ? "would remove" : "removed") : "kept"})`,
    );
  }
  const touched = [...r.added, ...r.changed.keys()].map((f) => f.replace(/\.json$/, ""));
  if (touched.length && !dryRun) {
    lines.push(`next: deno task conformance --only ${touched.join(",")}`);
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { prune: { type: "boolean" }, "dry-run": { type: "boolean" } },
  });
  const source = positionals[0] ?? DEFAULT_SOURCE;
  try {
    const report = await syncGolden(source, GOLDEN_COPY, { prune: values.prune, dryRun: values["dry-run"] });
    console.log(
      `${source} → conformance/hccm_golden: ${formatReport(report, !!values.prune, !!values["dry-run"])}`,
    );
  } catch (err) {
    console.error((err as Error).message);
    Deno.exit(1);
  }
}
