/**
 * The differences from the official CCM that the suite accepts, each matched by a precise rule: the
 * field (a path pattern) and the cases it applies to (named, or described by what the case sets
 * up). `intentional` rows are better for users and are listed in the README ("Differences from the
 * official CCM"); `open` rows are known and not fixed yet: they are reported, never hidden.
 *
 * @module
 */
import type { Case } from "./case_file.ts";
import type { Difference } from "./compare.ts";

/** One accepted difference. */
export interface ListedDifference {
  id: string;
  kind: "intentional" | "open";
  /** What users see, for the README table. */
  summary: string;
  /** Why it is better for users (intentional), or what is missing (open). */
  reason: string;
  /** Which cases: a description for the README, and the rule. */
  cases: string;
  appliesTo: (c: Case) => boolean;
  /** Which fields. */
  path: RegExp;
  /** Which phases (default: every phase). */
  phase?: RegExp;
}

const annotations = (c: Case): Record<string, string> =>
  Object.assign({}, ...(c.services ?? []).map((s) => s.annotations ?? {}));

/** The table. */
export const LISTED_DIFFERENCES: ListedDifference[] = [];

/** The listed difference that accepts `d` in case `c`, if any. */
export function listedFor(c: Case, d: Difference): ListedDifference | undefined {
  return LISTED_DIFFERENCES.find((l) =>
    l.appliesTo(c) && l.path.test(d.path) && (!l.phase || l.phase.test(d.phase))
  );
}

// Kept for rules that read annotations.
void annotations;
