/**
 * Go's `strconv.ParseBool`, which the official CCM uses for its environment variables and
 * annotations: the one place that decides what "true" and "false" may be spelled as.
 *
 * @module
 */

const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** `true`/`false` as Go reads `text`, or `undefined` when Go would reject it. */
export function parseGoBool(text: string): boolean | undefined {
  return TRUE.has(text) ? true : FALSE.has(text) ? false : undefined;
}

/** Every spelling Go accepts (only those of `true` when `only` is true), for checks outside JavaScript. */
export function parseGoBoolSpellings(only?: true): string[] {
  return only ? [...TRUE] : [...TRUE, ...FALSE];
}
