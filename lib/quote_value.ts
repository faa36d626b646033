/**
 * How a value someone else wrote appears in our events and errors: escaped (a NUL byte or a line
 * break cannot reach an event raw) and cut to 64 characters (a 10 kB annotation cannot fill one).
 *
 * @module
 */

/** `value` quoted, escaped and at most 64 characters, with its length when it was cut. */
export function quoteValue(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value) +
    (value.length > 64 ? ` (${value.length} characters)` : "");
}
