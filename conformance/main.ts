/**
 * `deno task conformance [DIR...]`: runs every case in the DIRs (default: the recorded HCCM cases,
 * `conformance/hccm_golden/cases`, and our own, `conformance/cases`) against our CCM and compares each
 * phase with the recorded outcome.
 * Prints one line per case and a summary; exits 1 when a difference is not listed in
 * `differences.ts`.
 *
 * Options: `--only a,b` (cases by name), `--parallel N` (cases at once, default 3), `--json FILE`
 * (results), `--logs DIR` (each CCM's output), `--quiet-ms N` (shorter convergence window, for
 * development only: the documented 10 s is the default), `--docs check|write` (the conformance page's
 * conformance section against this run), `--record` (write each case's observed outcome as its
 * `expected_outcome`: for writing our own cases, whose outcomes are then reviewed by hand).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Case, casePath, expectedOf, loadCases } from "./case_file.ts";
import { comparePhases, type Difference } from "./compare.ts";
import { LISTED_DIFFERENCES, listedFor } from "./differences.ts";
import { DOCUMENTED_CONVERGENCE } from "./convergence.ts";
import { type CaseRun, runCase } from "./run_case.ts";
import { quietLogs } from "../testing/helpers.ts";
import { normalizeMarkdown, renderSection, withSection } from "./docs_section.ts";

/** One case's verdict. */
export interface CaseResult {
  name: string;
  category: string;
  source: "hccm" | "ours";
  family?: string;
  uncertain?: boolean;
  seconds: number;
  converged: boolean;
  ccmExit?: number;
  /** The last lines the CCM wrote, kept when it exited by itself (they say why). */
  ccmTail?: string;
  differences: (Difference & { listed?: string })[];
  error?: string;
}

/** The repository's copy of HCCM's recordings (`deno task golden:sync` refreshes it) and our own cases. */
const DEFAULT_DIRS = [
  new URL("hccm_golden/cases", import.meta.url).pathname,
  new URL("cases", import.meta.url).pathname,
];

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: {
      only: { type: "string" },
      parallel: { type: "string", default: "3" },
      json: { type: "string" },
      logs: { type: "string" },
      "quiet-ms": { type: "string" },
      docs: { type: "string" },
      record: { type: "boolean" },
    },
  });
  quietLogs();
  const dirs = positionals.length ? positionals : DEFAULT_DIRS;
  const only = values.only ? values.only.split(",") : [];
  const cases: Case[] = [];
  for (const dir of dirs) cases.push(...await loadCases(dir, only));
  if (cases.length === 0) {
    console.error(`no cases in ${dirs.join(", ")}`);
    return 1;
  }
  const convergence = values["quiet-ms"]
    ? { ...DOCUMENTED_CONVERGENCE, quietMs: Number(values["quiet-ms"]) }
    : DOCUMENTED_CONVERGENCE;
  if (values.logs) await Deno.mkdir(values.logs, { recursive: true });
  const started = Date.now();
  const results: CaseResult[] = [];
  const queue = [...cases];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const result = await judge(c, convergence, values.logs, values.record);
      results.push(result);
      console.log(line(result));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Number(values.parallel)) }, worker));
  results.sort((a, b) => a.name.localeCompare(b.name));
  const summary = summarize(results, (Date.now() - started) / 1000);
  console.log(summary.text);
  if (values.json) {
    await Deno.writeTextFile(values.json, JSON.stringify({ results, summary: summary.counts }, null, 2));
  }
  const failed = summary.counts.unlisted > 0 || summary.counts.errors > 0;
  if (values.docs && !failed) {
    if (only.length) throw new Error("--docs needs a run of every case (no --only)");
    const path = new URL("../docs/explanation/conformance.md", import.meta.url);
    const page = await Deno.readTextFile(path);
    const wanted = withSection(page, renderSection(results));
    if (values.docs === "write") {
      await Deno.writeTextFile(path, wanted);
      await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", path.pathname] }).output();
      console.log("docs/explanation/conformance.md: conformance section written");
    } else if (normalizeMarkdown(wanted) !== normalizeMarkdown(page)) {
      console.error(
        "docs/explanation/conformance.md: the conformance section does not match this run; run `deno task conformance --docs write`",
      );
      return 1;
    } else console.log("docs/explanation/conformance.md: conformance section matches this run");
  }
  return failed ? 1 : 0;
}

async function judge(
  c: Case,
  convergence: typeof DOCUMENTED_CONVERGENCE,
  logs?: string,
  record = false,
): Promise<CaseResult> {
  const expected = expectedOf(c);
  let run: CaseRun;
  try {
    run = await runCase(c, convergence);
  } catch (err) {
    return {
      name: c.name,
      category: c.category ?? "other",
      source: expected.source,
      family: c.family,
      uncertain: !!c.uncertain,
      seconds: 0,
      converged: false,
      differences: [],
      error: (err as Error).stack ?? String(err),
    };
  }
  if (logs) await Deno.writeTextFile(`${logs}/${c.name}.log`, run.ccmOutput);
  if (record) await recordOutcome(c, run);
  const differences = comparePhases(expected.phases, run.phases).map((d) => ({
    ...d,
    listed: listedFor(c, d)?.id,
  }));
  return {
    name: c.name,
    category: c.category ?? "other",
    source: expected.source,
    family: c.family,
    uncertain: !!c.uncertain,
    seconds: run.seconds,
    converged: run.phases.every((p) => p.converged),
    ccmExit: run.ccmExit,
    ccmTail: run.ccmExit === undefined ? undefined : run.ccmOutput.trimEnd().split("\n").slice(-8).join("\n"),
    differences,
  };
}

/** Writes what our CCM did as the case's `expected_outcome` (our own cases only). */
async function recordOutcome(c: Case, run: CaseRun): Promise<void> {
  const path = casePath(c);
  if (c.hccm_outcome || !path) throw new Error(`${c.name}: only our own cases can be recorded`);
  const phases = run.phases.map((p) => ({
    phase: p.phase,
    converged: p.converged,
    state: p.state,
    info: { warning_messages: p.warningMessages },
  }));
  await Deno.writeTextFile(path, JSON.stringify({ ...c, expected_outcome: { phases } }, null, 2) + "\n");
}

function line(r: CaseResult): string {
  const tag = r.source === "ours" ? " (ours)" : "";
  if (r.error) return `ERROR     ${r.name}${tag}: ${r.error.split("\n")[0]}`;
  const unlisted = r.differences.filter((d) => !d.listed);
  const listed = r.differences.length - unlisted.length;
  const exit = r.ccmExit !== undefined ? `, CCM exited with ${r.ccmExit}` : "";
  const time = `${r.seconds.toFixed(0)} s`;
  if (r.differences.length === 0) return `IDENTICAL ${r.name}${tag} (${time}${exit})`;
  const status = unlisted.length ? "DIFFERS  " : "LISTED   ";
  const conv = r.converged ? "" : ", not converged";
  const detail = unlisted.map((d) =>
    `\n    ${d.phase} ${d.path}: expected ${JSON.stringify(d.expected)}, got ${JSON.stringify(d.actual)}`
  ).join("");
  const ids = [...new Set(r.differences.filter((d) => d.listed).map((d) => d.listed))].join(", ");
  // A CCM that stopped by itself explains every difference after it: its last words come first.
  const why = unlisted.length && r.ccmTail ? `\n    the CCM's last output:\n${indent(r.ccmTail, 6)}` : "";
  return `${status} ${r.name}${tag} (${time}${exit}${conv}): ${unlisted.length} unlisted, ${listed} listed` +
    (ids ? ` [${ids}]` : "") + why + detail;
}

function indent(text: string, spaces: number): string {
  return text.split("\n").map((l) => " ".repeat(spaces) + l).join("\n");
}

function summarize(results: CaseResult[], seconds: number) {
  const counts = {
    cases: results.length,
    identical: results.filter((r) => !r.error && r.differences.length === 0).length,
    differing: results.filter((r) => r.differences.length > 0).length,
    only_listed:
      results.filter((r) => r.differences.length > 0 && r.differences.every((d) => d.listed)).length,
    not_converged: results.filter((r) => !r.error && !r.converged).length,
    errors: results.filter((r) => r.error).length,
    unlisted: results.reduce((n, r) => n + r.differences.filter((d) => !d.listed).length, 0),
    seconds: Math.round(seconds),
  };
  const used = new Set(results.flatMap((r) => r.differences.map((d) => d.listed)));
  const open = LISTED_DIFFERENCES.filter((l) => l.kind === "open" && used.has(l.id)).map((l) => l.id);
  const text = [
    "",
    `conformance: ${counts.cases} cases, ${counts.identical} identical, ${counts.differing} differing ` +
    `(${counts.only_listed} only in listed ways), ${counts.not_converged} not converged, ${counts.errors} errors; ` +
    `${counts.unlisted} unlisted differences; ${counts.seconds} s`,
    ...(open.length ? [`known open differences seen: ${open.join(", ")}`] : []),
  ].join("\n");
  return { counts, text };
}

if (import.meta.main) Deno.exit(await main());
