/**
 * What went wrong when a request got no answer, in an operator's words: fetch says only "fetch failed"
 * and keeps the cause (DNS, refused, TLS, timeout) in its `cause` chain.
 *
 * @module
 */

/** Kinds of failure, in the order they are recognized (the first match names it). */
const KINDS: [RegExp, string][] = [
  [
    /dns error|failed to lookup address|name or service not known|nodename nor servname|no address associated/i,
    "DNS lookup failed",
  ],
  [/connection refused/i, "connection refused"],
  [/certificate|tls|ssl|handshake|unknownissuer|peer sent no certificates/i, "TLS failed"],
  [/timed out|timeout|deadline/i, "timed out"],
  [/network is unreachable|no route to host|host is unreachable/i, "network unreachable"],
  [/connection reset|broken pipe|connection closed|unexpected eof|incomplete message/i, "connection lost"],
];

/** The messages of `err` and its causes, outermost first. */
function chain(err: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (e instanceof Error || (typeof e === "object" && "message" in (e as object))) {
      const { name, message } = e as Error;
      out.push(name === "TimeoutError" && !/time/i.test(message) ? `timed out: ${message}` : String(message));
      e = (e as { cause?: unknown }).cause;
    } else {
      out.push(String(e));
      break;
    }
  }
  return out;
}

/**
 * `err` as "<kind> (<innermost detail>)", e.g. `connection refused (tcp connect error: Connection refused
 * (os error 111))`; the detail alone when the kind is not recognized.
 */
export function describeNetworkError(err: unknown): string {
  const messages = chain(err);
  const text = messages.join(" | ");
  // The innermost message, without fetch's "error sending request for url (…): " prefix (the
  // caller names the endpoint) and the client's layers ("client error (Connect): ").
  const detail = (messages.at(-1) ?? "unknown error")
    .replace(/^error sending request (?:from \S+ )?for url \([^)]*\): /, "")
    .replace(/^client error \(\w+\): /, "");
  const kind = KINDS.find(([pattern]) => pattern.test(text))?.[1];
  return kind && kind !== detail ? `${kind} (${detail})` : detail;
}
