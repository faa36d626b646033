/**
 * What an answer of the Cloud API may hold before the CCM acts on it: a bounded size (an answer read
 * whole, or one read as it streams), and numbers a JavaScript number holds exactly (IDs are int64 in
 * the API; a rounded one would name another object).
 *
 * @module
 */
import { CloudApiError } from "./errors.ts";

/**
 * The largest answer read (security probe N10: a 100 MB page took the process to 694 MB, beyond the
 * chart's memory limit). Pages read whole are small; the lists of balancers, whose label selectors
 * list every server they match, are read as they stream (`STREAM_HEADER`, transport.ts).
 */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

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

/** A JSON number literal too large to be exact in JavaScript (IDs are int64 in the API). */
const BIG_NUMBER = /[:[,]\s*(\d{16,})(?=\s*[,\]}])/g;

/**
 * The response, after checking that no number in it is beyond 2^53 - 1: parsed, such an ID would
 * silently name another object, so the call fails instead.
 */
export async function exactNumbers(response: Response): Promise<Response> {
  const noBody = response.status === 204 || response.status === 205 || response.status === 304;
  if (noBody || !(response.headers.get("content-type") ?? "").includes("json")) return response;
  const text = await boundedText(response);
  checkExactNumbers(text, response.status);
  return new Response(text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Throws `unsafe_number` when a number in the JSON `text` is beyond 2^53 - 1 (see {@link exactNumbers}). */
export function checkExactNumbers(text: string, status = 200): void {
  for (const m of text.matchAll(BIG_NUMBER)) {
    if (BigInt(m[1]) > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new CloudApiError(
        `the API answered with the number ${m[1]}, beyond the IDs this CCM can handle exactly ` +
          `(up to ${Number.MAX_SAFE_INTEGER}); refusing to act on it`,
        { status, code: "unsafe_number" },
      );
    }
  }
}
