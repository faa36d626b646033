/**
 * The `node-selector` grammar lib/label_selector.ts parses, as one regular expression (for the
 * admission policy, which has only `matches()`): requirements `k`, `!k`, `k=v`, `k==v`, `k!=v`,
 * `k in (v,…)`, `k notin (v,…)`, joined by commas, with ASCII space around each part.
 *
 * @module
 */
import { ASCII_SPACE } from "../../../../lib/ascii_space.ts";
import { KEY, VALUE } from "../../../../lib/label_selector.ts";

/** The selector pattern (RE2 and JavaScript), anchored. */
export function selectorPattern(): string {
  const s = ASCII_SPACE;
  const k = `(${KEY.source.slice(1, -1)})`;
  const v = `(${VALUE.source.slice(1, -1)})`;
  const requirement = `${s}*(!${s}*${k}|${k}|${k}${s}*(==|!=|=)${s}*${v}|` +
    `${k}${s}+(in|notin)${s}*\\(${s}*${v}(${s}*,${s}*${v})*${s}*\\))${s}*`;
  return `^${requirement}(,${requirement})*$`;
}
