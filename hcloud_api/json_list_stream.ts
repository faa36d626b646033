/**
 * A list page read as it streams: the items of one top-level array (`load_balancers`, say) are
 * parsed one at a time and handed on, so a page never sits whole in memory. A balancer whose label
 * selector resolves 5000 servers is ~750 KB of JSON; 50 of them are 37 MB — parsed whole, the page
 * would cost far more than the CCM's whole heap. Each item is cut out by a scanner that only tracks
 * strings and nesting, and parsed by `JSON.parse`; the page's other fields (`meta`) are small and
 * returned parsed.
 *
 * @module
 */

/** The page without the streamed list: its other top-level fields, parsed. */
export type PageRest = Record<string, unknown>;

/** What a reader may add: a check of each item's text before it is parsed, and a bound on its size. */
export interface StreamOptions {
  /** Called with each item's (and other field's) text before it is parsed; throws to refuse it. */
  check?: (text: string) => void;
  /** The longest item held (default {@link MAX_ITEM_CHARS}): an answer without end must end. */
  maxItemChars?: number;
}

/**
 * A balancer whose label selector resolves 25 000 servers is about 4 MB (one resolving 5000 is
 * ~750 kB; Hetzner resolves at most a few hundred). Parsed, an item of small objects costs ~12 times
 * its text (security review Q9: 30 MB took 388 MB), so this bound keeps what one hostile item adds
 * to ~45 MB (bench/hostile_answers.ts).
 */
export const MAX_ITEM_CHARS = 4 * 1024 * 1024;

/**
 * The page's fields besides the list, together (`meta` is a few hundred bytes): all of them are
 * kept, so they are bounded as a whole (Q9: sixteen 30 MB fields held 1 GB).
 */
export const MAX_REST_CHARS = 1024 * 1024;

/**
 * The deepest nesting an item, a field or an answer read whole may have (a balancer nests 6 levels).
 * Parsed, deep nesting costs ~55 times its text (Q9: an item nested 15 M deep took 1.67 GB).
 */
export const MAX_DEPTH = 64;

/** The body could not be read to its end (the connection broke); `cause` says how. */
export class PageReadError extends Error {
  constructor(cause: unknown) {
    super(`the answer broke off: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "PageReadError";
  }
}

enum Mode {
  BeforeObject,
  KeyOrEnd,
  Key,
  Colon,
  ValueStart,
  Value,
  AfterValue,
  ItemStart,
  Item,
  AfterItem,
  Done,
}

const QUOTE = 34, BACKSLASH = 92, COMMA = 44, COLON = 58;
const OPEN_OBJ = 123, CLOSE_OBJ = 125, OPEN_ARR = 91, CLOSE_ARR = 93;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/**
 * Reads the JSON object in `stream`, calling `onItem` with each element of its top-level array
 * `key`, in order; returns the object's other fields. Throws `SyntaxError` on anything that is not
 * one well-formed JSON object (the caller's error for a bad answer), {@link PageReadError} when the
 * body breaks off, and whatever `onItem` throws.
 */
export async function streamListPage(
  stream: ReadableStream<Uint8Array>,
  key: string,
  onItem: (item: unknown) => void,
  options: StreamOptions = {},
): Promise<PageRest> {
  const check = options.check ?? (() => {});
  const maxChars = options.maxItemChars ?? MAX_ITEM_CHARS;
  let held = 0;
  const rest: PageRest = {};
  let mode = Mode.BeforeObject as Mode;
  let currentKey = "";
  // The value or item being cut out: its text so far (parts), where it starts in this chunk, and
  // the scanner's state inside it.
  let parts: string[] = [];
  let start = -1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** A number, `true`, `false` or `null`: it ends at the first character that cannot continue it. */
  let primitive = false;
  let sawItemsArray = false;
  /** The list's key was read (a second one is refused, whatever its value: JSON.parse keeps the last). */
  let sawListKey = false;
  /** An item follows a comma: `]` there is a trailing comma, which JSON.parse refuses. */
  let afterComma = false;
  /** Characters of the fields besides the list, so far. */
  let restChars = 0;
  const bad = (what: string): never => {
    throw new SyntaxError(`not a JSON list page: ${what}`);
  };
  const finish = (text: string) => {
    held = 0;
    if (mode !== Mode.Key) check(text);
    // No trimming: a cut value never starts or ends with JSON whitespace, and any other space
    // around it (NBSP, U+2028, U+FEFF) is text JSON.parse refuses, as it must (Q10).
    if (mode === Mode.Key) {
      currentKey = JSON.parse(text);
      if (currentKey === key) {
        if (sawListKey) bad(`two "${key}" fields`);
        sawListKey = true;
      }
      mode = Mode.Colon;
    } else if (mode === Mode.Value) {
      restChars += text.length;
      if (restChars > MAX_REST_CHARS) bad(`fields besides "${key}" longer than ${MAX_REST_CHARS} characters`);
      rest[currentKey] = JSON.parse(text);
      mode = Mode.AfterValue;
    } else {
      onItem(JSON.parse(text));
      mode = Mode.AfterItem;
    }
  };
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const reader = stream.getReader();
  try {
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (err) {
        throw new PageReadError(err);
      }
      const { value, done } = read;
      let chunk: string;
      try {
        chunk = done ? decoder.decode() : decoder.decode(value, { stream: true });
      } catch (err) {
        throw new SyntaxError("not a JSON list page: not UTF-8", { cause: err });
      }
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk.charCodeAt(i);
        switch (mode) {
          case Mode.BeforeObject:
            if (isSpace(c)) continue;
            if (c !== OPEN_OBJ) bad("no object");
            mode = Mode.KeyOrEnd;
            continue;
          case Mode.KeyOrEnd:
            if (isSpace(c)) continue;
            if (c === CLOSE_OBJ && Object.keys(rest).length === 0 && !sawItemsArray) {
              mode = Mode.Done;
              continue;
            }
            if (c !== QUOTE) bad("a key expected");
            mode = Mode.Key;
            parts = [];
            start = i;
            inString = true;
            escaped = false;
            continue;
          case Mode.Colon:
            if (isSpace(c)) continue;
            if (c !== COLON) bad("':' expected");
            mode = Mode.ValueStart;
            continue;
          case Mode.ValueStart:
          case Mode.ItemStart:
            if (isSpace(c)) continue;
            if (mode === Mode.ValueStart && currentKey === key) {
              if (c !== OPEN_ARR) bad(`"${key}" is not a list`);
              sawItemsArray = true;
              afterComma = false;
              mode = Mode.ItemStart;
              continue;
            }
            if (mode === Mode.ItemStart && c === CLOSE_ARR) {
              if (afterComma) bad("a trailing comma in the list");
              mode = Mode.AfterValue;
              continue;
            }
            mode = mode === Mode.ValueStart ? Mode.Value : Mode.Item;
            parts = [];
            start = i;
            depth = c === OPEN_OBJ || c === OPEN_ARR ? 1 : 0;
            inString = c === QUOTE;
            escaped = false;
            primitive = depth === 0 && !inString;
            if (primitive && (c === COMMA || c === CLOSE_OBJ || c === CLOSE_ARR)) bad("a value expected");
            continue;
          case Mode.Key:
          case Mode.Value:
          case Mode.Item: {
            if (inString) {
              if (escaped) escaped = false;
              else if (c === BACKSLASH) escaped = true;
              else if (c === QUOTE) {
                inString = false;
                if (depth === 0) {
                  parts.push(chunk.slice(start, i + 1));
                  start = -1;
                  finish(parts.join(""));
                }
              }
              continue;
            }
            if (primitive) {
              if (c === COMMA || c === CLOSE_OBJ || c === CLOSE_ARR || isSpace(c)) {
                parts.push(chunk.slice(start, i));
                start = -1;
                finish(parts.join(""));
                i--; // the character that ended it is read again after the value
              }
              continue;
            }
            if (c === QUOTE) inString = true;
            else if (c === OPEN_OBJ || c === OPEN_ARR) {
              if (++depth > MAX_DEPTH) bad(`an item or field nested deeper than ${MAX_DEPTH} levels`);
            } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
              if (--depth === 0) {
                parts.push(chunk.slice(start, i + 1));
                start = -1;
                finish(parts.join(""));
              }
            }
            continue;
          }
          case Mode.AfterValue:
          case Mode.AfterItem:
            if (isSpace(c)) continue;
            if (mode === Mode.AfterItem) {
              if (c === COMMA) {
                mode = Mode.ItemStart;
                afterComma = true;
              } else if (c === CLOSE_ARR) mode = Mode.AfterValue;
              else bad("',' or ']' expected");
              continue;
            }
            if (c === COMMA) mode = Mode.KeyOrEnd;
            else if (c === CLOSE_OBJ) mode = Mode.Done;
            else bad("',' or '}' expected");
            continue;
          case Mode.Done:
            if (!isSpace(c)) bad("text after the object");
            continue;
        }
      }
      if (start >= 0) {
        // The value goes on in the next chunk: keep what this one holds of it.
        parts.push(chunk.slice(start));
        held += chunk.length - start;
        if (held > maxChars) bad(`an item or field longer than ${maxChars} characters`);
        if (mode === Mode.Value && restChars + held > MAX_REST_CHARS) {
          bad(`fields besides "${key}" longer than ${MAX_REST_CHARS} characters`);
        }
        start = 0;
      }
      if (done) break;
    }
  } finally {
    reader.releaseLock();
  }
  if (mode !== Mode.Done) bad("it ends early");
  if (!sawItemsArray) bad(`no "${key}" list`);
  return rest;
}
