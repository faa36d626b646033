/**
 * Environment variables that look like ours but are not (security review Q12): a misspelled
 * `HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECT_NAMESPACES=""` was ignored without a word, leaving the
 * permissive `*` in force. Only names are judged, never a value.
 *
 * @module
 */
import { ENV_VARS } from "./env.ts";

/** The prefixes of the variables this CCM (and the official one) reads. */
const OURS = /^(HCLOUD_|ROBOT_)/;

/**
 * The names of the environment variables to judge: those the chart's `env:` sets (it passes them in
 * `DENO_CCM_ENV_NAMES`), and, where the process may list its environment (`deno run -A`), all of them.
 * The compiled binary may read only the variables it knows (`--allow-env` names them), so it cannot
 * list the rest itself.
 */
export function environmentNames(env: Record<string, string | undefined>): string[] {
  const names = new Set((env.DENO_CCM_ENV_NAMES ?? "").split(",").map((n) => n.trim()).filter(Boolean));
  try {
    for (const name of Object.keys(Deno.env.toObject())) names.add(name);
  } catch {
    // Not allowed (the compiled binary): the chart's names are what there is.
  }
  return [...names];
}

/**
 * What to say of each name in `names` that looks like one of ours (`HCLOUD_`, `ROBOT_`) but is not
 * read, with the known name it most likely misspells.
 */
export function unknownEnvWarnings(names: string[], known: readonly string[] = ENV_VARS): string[] {
  return names.filter((n) => OURS.test(n) && !known.includes(n)).sort().map((name) => {
    const near = closest(name, known);
    return `environment variable ${name} is not read by deno-ccm` +
      (near ? ` (did you mean ${near}?)` : "") + ": it has no effect";
  });
}

/** The known name within a few edits of `name`, if one is. */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(3, Math.floor(name.length / 8)) + 1;
  for (const k of known) {
    const d = distance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** Levenshtein distance (names are short: the quadratic table is fine). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}
