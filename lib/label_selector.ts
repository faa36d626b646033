/**
 * Hetzner/Kubernetes label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`,
 * `k notin (a,b)`, joined by commas (AND).
 *
 * @module
 */
import { trimAscii } from "./ascii_space.ts";

type Requirement =
  | { op: "eq" | "neq"; key: string; value: string }
  | { op: "exists" | "absent"; key: string }
  | { op: "in" | "notin"; key: string; values: string[] };

/** A label key (exported for the admission policy, which checks selectors with the same grammar). */
export const KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A label value. */
export const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** A parsed selector; `matches` tests a label map. */
export interface LabelSelector {
  matches(labels: Record<string, string>): boolean;
}

/** Parses a selector, throwing a `SyntaxError` that names the bad part. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements: Requirement[] = [];
  for (const part of splitTopLevel(text)) {
    const p = trimAscii(part);
    if (p === "") throw new SyntaxError(`empty requirement in "${text}"`);
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^([^ \t\n\v\f\r]+?)[ \t\n\v\f\r]+(in|notin)[ \t\n\v\f\r]*\(([^)]*)\)$/))) {
      const values = m[3].split(",").map((v) => trimAscii(v));
      check(m[1], values);
      requirements.push({ op: m[2] as "in" | "notin", key: m[1], values });
    } else if ((m = p.match(/^([^ \t\n\v\f\r]+?)[ \t\n\v\f\r]*(==|!=|=)[ \t\n\v\f\r]*([^ \t\n\v\f\r]*)$/))) {
      check(m[1], [m[3]]);
      requirements.push({ op: m[2] === "!=" ? "neq" : "eq", key: m[1], value: m[3] });
    } else if ((m = p.match(/^![ \t\n\v\f\r]*([^ \t\n\v\f\r]+)$/))) {
      check(m[1], []);
      requirements.push({ op: "absent", key: m[1] });
    } else {
      check(p, []);
      requirements.push({ op: "exists", key: p });
    }
  }
  return {
    matches(labels) {
      return requirements.every((r) => {
        const has = Object.hasOwn(labels, r.key);
        switch (r.op) {
          case "eq":
            return has && labels[r.key] === r.value;
          case "neq":
            return !has || labels[r.key] !== r.value;
          case "exists":
            return has;
          case "absent":
            return !has;
          case "in":
            return has && r.values.includes(labels[r.key]);
          case "notin":
            return !has || !r.values.includes(labels[r.key]);
        }
      });
    },
  };
}

function check(key: string, values: string[]): void {
  if (!KEY.test(key)) throw new SyntaxError(`invalid label key "${key}"`);
  for (const v of values) if (!VALUE.test(v)) throw new SyntaxError(`invalid label value "${v}"`);
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

/** True when every key and value of `labels` is valid (for request validation). */
export function validLabels(labels: unknown): labels is Record<string, string> {
  if (!labels || typeof labels !== "object" || Array.isArray(labels)) return false;
  return Object.entries(labels).every(([k, v]) => KEY.test(k) && typeof v === "string" && VALUE.test(v));
}
