/**
 * Decoding a watch response body (one JSON event per line) into typed events.
 *
 * @module
 */
import type { KubeStatus } from "./errors.ts";

/** One watch event; `BOOKMARK` carries only `metadata.resourceVersion`, `ERROR` a Status. */
export type WatchEvent<T> =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T }
  | { type: "BOOKMARK"; object: { metadata: { resourceVersion: string } } }
  | { type: "ERROR"; object: KubeStatus };

/** Yields the events of a watch body until it ends; a line that is not JSON throws. */
export async function* decodeWatchStream<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<WatchEvent<T>> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) yield JSON.parse(line) as WatchEvent<T>;
    }
  }
  const rest = (buffer + decoder.decode()).trim();
  if (rest) yield JSON.parse(rest) as WatchEvent<T>;
}
