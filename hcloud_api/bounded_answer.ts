/**
 * What an answer of the Cloud API may hold before the CCM acts on it: a bounded size (an answer read
 * whole, or one read as it streams), and numbers a JavaScript number holds exactly (IDs are int64 in
 * the API; a rounded one would name another object).
 *
 * @module
 */
import { CloudApiError } from "./errors.ts";
import { MAX_DEPTH } from "./json_list_stream.ts";

/**
 * The largest answer read whole (security probe N10: a 100 MB page took the process to 694 MB; review
 * Q9: parsed, small objects cost ~12 times their text, so 32 MB could take 388 MB, beyond the chart's
 * 256 Mi). Pages read whole are small (50 servers are ~250 kB; one balancer over 10 000 servers
 * ~1.5 MB); the lists of balancers, whose label selectors list every server they match, are read as
 * they stream (`STREAM_HEADER`, transport.ts).
 */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * The most a streamed answer may send (a page of 50 balancers over 5000 Nodes is ~37 MB): it is never
 * held whole, but an answer without end must end.
 */
export const MAX_STREAMED_BYTES = 512 * 1024 * 1024;

/** The response with its body counted as it is read, failing past {@link MAX_STREAMED_BYTES}. */
export function boundedStream(response: Response): Response {
  let size = 0;
  const counted = response.body?.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > MAX_STREAMED_BYTES) {
          controller.error(
            new CloudApiError(
              `the API answered with more than ${MAX_STREAMED_BYTES} bytes; stopped reading`,
              {
                status: response.status,
                code: "response_too_large",
              },
            ),
          );
        } else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted ?? null, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** The body as text, refusing one larger than {@link MAX_RESPONSE_BYTES} before holding it whole. */
async function boundedText(response: Response): Promise<string> {
  const tooLarge = () =>
    new CloudApiError(`the API answered with more than ${MAX_RESPONSE_BYTES} bytes; refusing to read it`, {
      status: response.status,
      code: "response_too_large",
    });
  const declared = response.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_RESPONSE_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  // A declared length within the bound is read as usual (one buffer); only an undeclared one is counted.
  if (declared !== null && /^\d+$/.test(declared)) return await response.text();
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/**
 * The response, after checking that no number in it is beyond 2^53 - 1: parsed, such an ID would
 * silently name another object, so the call fails instead.
 */
export async function exactNumbers(response: Response): Promise<Response> {
  const noBody = response.status === 204 || response.status === 205 || response.status === 304;
  if (noBody || !(response.headers.get("content-type") ?? "").includes("json")) return response;
  const text = await boundedText(response);
  checkAnswerText(text, response.status);
  return new Response(text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * A number token of at most this many characters, without an exponent, has at most 15 digits and so
 * lies below 10^15 < 2^53: only longer tokens (or ones with an exponent) are converted and checked.
 */
const SHORT_NUMBER = 15;

/**
 * Throws `unsafe_number` when a number in the JSON `text` is an integer beyond 2^53 - 1 in magnitude,
 * in any notation (`-9007199254740993`, `9007199254740993.0`, `9.007199254740993e15`): parsed, it
 * would be rounded and could name another object (see {@link exactNumbers}). Throws
 * `invalid_response` when the text nests deeper than {@link MAX_DEPTH}.
 *
 * Only numbers are read: the text of strings is skipped, so a string a tenant wrote (a health-check
 * path `"/x:99999999999999999,"`, security review Q1) can never make an answer fail. `text` is a whole
 * JSON value: an answer, or one item or field of a streamed list. Malformed JSON is not judged here
 * (its parse refuses it): an unterminated string ends the scan.
 */
export function checkAnswerText(text: string, status = 200): void {
  const n = text.length;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i + 1);
    } else if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (++depth > MAX_DEPTH) {
        throw new CloudApiError(`the API answered with JSON nested deeper than ${MAX_DEPTH} levels`, {
          status,
          code: "invalid_response",
        });
      }
      i++;
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      depth--;
      i++;
    } else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      let j = i + 1;
      let exponent = false;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === LOWER_E || d === UPPER_E) exponent = true;
        else if (!((d >= DIGIT_0 && d <= DIGIT_9) || d === DOT || d === PLUS || d === MINUS)) break;
      }
      if (exponent || j - i > SHORT_NUMBER) checkNumber(text.slice(i, j), status);
      i = j;
    } else {
      i++;
    }
  }
}

const QUOTE = 0x22;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/**
 * The index after the quote that ends the string whose text begins at `from` (`text.length` when it
 * never ends). A quote ends it when an even number of backslashes precedes it; each run of backslashes
 * is walked once, so the scan stays linear.
 */
function stringEnd(text: string, from: number): number {
  let at = from;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return text.length;
    let slashes = 0;
    for (let b = quote - 1; b >= at && text.charCodeAt(b) === BACKSLASH; b--) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

function checkNumber(token: string, status: number): void {
  const value = Number(token);
  // NaN is a malformed token: the parse that follows refuses it with its own message. A token beyond
  // the doubles (`1e400`) parses to Infinity, which is no more exact than a rounded ID.
  if (Number.isNaN(value)) return;
  if (!Number.isFinite(value) || (Number.isInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER)) {
    throw new CloudApiError(
      `the API answered with the number ${token}, beyond the IDs this CCM can handle exactly ` +
        `(up to ${Number.MAX_SAFE_INTEGER}); refusing to act on it`,
      { status, code: "unsafe_number" },
    );
  }
}
