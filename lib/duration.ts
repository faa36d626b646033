/**
 * Go-style durations (`300ms`, `1.5h`, `2h45m`, `0`) as used by the upstream flags and the
 * official CCM's environment variables.
 *
 * @module
 */
import { trimAscii } from "./ascii_space.ts";

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Parses a Go duration into milliseconds; `undefined` when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const s = trimAscii(text);
  if (s === "0") return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * UNITS[m[2]];
    matched = re.lastIndex;
  }
  if (matched === 0 || matched !== s.length) return undefined;
  return total;
}

/** Formats milliseconds the way Go prints durations (`5m0s`, `10s`, `1.5s`, `500ms`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ""}${h || m ? `${m}m` : ""}${s}s`;
}
