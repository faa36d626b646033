/**
 * ASCII white space: what our parsers trim from annotation and flag values. It is exactly what
 * Go's `strings.TrimSpace` (and so CEL's `trim()`) removes from ASCII text, so the apiserver's
 * admission policy can trim a value the way the CCM does (JavaScript's `trim()` also removes
 * Unicode spaces, which Go and CEL treat differently).
 *
 * @module
 */

/** The ASCII white space characters as a regular expression class (valid in JavaScript and RE2). */
export const ASCII_SPACE = "[ \\t\\n\\v\\f\\r]";

const EDGES = new RegExp(`^${ASCII_SPACE}+|${ASCII_SPACE}+$`, "g");

/** `text` without leading and trailing ASCII white space. */
export function trimAscii(text: string): string {
  return text.replace(EDGES, "");
}
