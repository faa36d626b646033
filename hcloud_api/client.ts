/**
 * The typed Hetzner Cloud client: `openapi-fetch` over the generated `paths`, on the
 * {@link createTransport} transport. Failures become {@link CloudApiError}s carrying the API's code
 * and message (never the token); lists are read page by page with 50 per page.
 *
 * @module
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./api_types.ts";
import { CloudApiError } from "./errors.ts";
import { PageReadError, streamListPage } from "./json_list_stream.ts";
import { checkAnswerText } from "./bounded_answer.ts";
import {
  createTransport,
  ENDPOINT_HEADER,
  type RateLimitState,
  STREAM_HEADER,
  type TransportOptions,
} from "./transport.ts";
import { redact } from "../lib/log.ts";

/** Schemas of the API. */
export type Schemas = components["schemas"];

/**
 * What a streamed list's page request adds to its options (`{ ..., ...streamed }`): the body as a
 * stream, and the header that tells the transport to pass it on unread.
 */
export const STREAMED = { parseAs: "stream", headers: { [STREAM_HEADER]: "1" } } as const;

/** Pages of one list read at once once its last page is known (four requests in flight at most). */
export const PARALLEL_PAGES = 4;

/** The most pages one list is read to (20 000 items at 50 a page): beyond, the answer is not believed. */
export const MAX_PAGES = 400;

/** What every openapi-fetch call resolves to. */
export interface FetchResult<T> {
  /** The answer's body, when it succeeded. */
  data?: T;
  /** The answer's body, when it failed. */
  error?: unknown;
  /** The HTTP response. */
  response: Response;
}

/** Settings of {@link HcloudClient}. */
export interface HcloudClientOptions extends TransportOptions {
  /** e.g. `https://api.hetzner.cloud/v1`. */
  endpoint: string;
}

/** The client. `api` is the raw typed client; `call` unwraps its results. */
export class HcloudClient {
  /** The typed client (openapi-fetch) over the transport. */
  readonly api: Client<paths>;
  readonly #transport;

  /** A client for `options.endpoint` over a transport made from `options`. */
  constructor(options: HcloudClientOptions) {
    this.#transport = createTransport(options);
    this.api = createClient<paths>({ baseUrl: options.endpoint, fetch: this.#transport.send });
    this.api.use({
      onRequest({ request, schemaPath }) {
        request.headers.set(ENDPOINT_HEADER, schemaPath);
        return request;
      },
    });
  }

  /** The rate-limit state the API reported last. */
  get rateLimit(): RateLimitState | undefined {
    return this.#transport.rateLimit;
  }

  /** Why the API cannot be reached now (said from the first failed attempt, not after the retries). */
  get unreachable(): string | undefined {
    return this.#transport.unreachable;
  }

  /**
   * Awaits an `api.GET/POST/...` call and returns its data, or throws a {@link CloudApiError}:
   * the API's error envelope, or `invalid_response` for anything else (an HTML error page, say).
   */
  async call<T>(what: string, pending: Promise<FetchResult<T>>): Promise<T> {
    let result: FetchResult<T>;
    try {
      result = await pending;
    } catch (err) {
      if (err instanceof CloudApiError) throw err;
      if (err instanceof SyntaxError) {
        throw new CloudApiError(`${what}: response is not JSON`, {
          status: 200,
          code: "invalid_response",
          cause: err,
        });
      }
      if (err instanceof DOMException && err.name === "AbortError") throw err;
      const message = redact(err instanceof Error ? err.message : String(err));
      throw new CloudApiError(`${what}: ${message}`, { status: 0, code: "connection_failed", cause: err });
    }
    const { response } = result;
    if (response.ok) {
      if (
        response.status !== 204 &&
        (result.data === undefined || result.data === null || typeof result.data !== "object")
      ) {
        throw new CloudApiError(`${what}: empty or non-object response`, {
          status: response.status,
          code: "invalid_response",
        });
      }
      return result.data as T;
    }
    const envelope =
      (result.error as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)
        ?.error;
    if (envelope && typeof envelope.code === "string") {
      const message = typeof envelope.message === "string" ? envelope.message : envelope.code;
      throw new CloudApiError(`${what}: ${redact(message)} (${envelope.code})`, {
        status: response.status,
        code: envelope.code,
        details: envelope.details,
        retryAfterSeconds: Number(response.headers.get("retry-after")) || undefined,
      });
    }
    throw new CloudApiError(
      `${what}: unexpected HTTP ${response.status} response without an API error body`,
      {
        status: response.status,
        code: response.status >= 500 ? "server_error" : "invalid_response",
      },
    );
  }

  /**
   * Every item of a paginated list (per_page 50); `key` is the list's field, e.g. `servers`. With
   * `map`, each page is converted as it arrives, so only one raw page is held at a time.
   *
   * A list must advance (`next_page` is the next page) and end: at the `last_page` its first page
   * announced, and at {@link MAX_PAGES} at most, so an answer that never ends cannot spend the
   * project's hourly budget on one list (security probe N10).
   */
  async listAll<T, R = T>(
    what: string,
    key: string,
    fetchPage: (page: number) => Promise<FetchResult<Record<string, unknown>>>,
    map: (item: T) => R = (item) => item as unknown as R,
  ): Promise<R[]> {
    return await this.#paginate(what, async (page, items) => {
      const data = await this.call(what, fetchPage(page));
      const list = data[key];
      if (!Array.isArray(list)) {
        throw new CloudApiError(`${what}: response has no "${key}" list`, {
          status: 200,
          code: "invalid_response",
        });
      }
      for (const item of list as T[]) items.push(map(item));
      return { count: list.length, meta: data.meta };
    });
  }

  /**
   * As {@link listAll}, with each page read as it streams (`fetchPage` asks for `parseAs:
   * "stream"`): an item is parsed, mapped and dropped before the next is read, so a page of any
   * size costs one item's memory (json_list_stream.ts).
   */
  async listAllStreamed<T, R = T>(
    what: string,
    key: string,
    fetchPage: (
      page: number,
      streamed: typeof STREAMED,
    ) => Promise<FetchResult<ReadableStream<Uint8Array> | null>>,
    map: (item: T) => R = (item) => item as unknown as R,
  ): Promise<R[]> {
    return await this.#paginate(what, async (page, items) => {
      const stream = await this.call(what, fetchPage(page, STREAMED));
      let count = 0;
      let rest;
      try {
        rest = await streamListPage(stream as ReadableStream<Uint8Array>, key, (item) => {
          count++;
          items.push(map(item as T));
        }, { check: (text) => checkAnswerText(text) });
      } catch (err) {
        if (err instanceof SyntaxError) {
          throw new CloudApiError(`${what}: ${err.message}`, {
            status: 200,
            code: "invalid_response",
            cause: err,
          });
        }
        // The transport's own refusal (too many bytes) reaches the reader as the stream's error.
        if (err instanceof PageReadError && err.cause instanceof CloudApiError) throw err.cause;
        if (err instanceof PageReadError) {
          throw new CloudApiError(`${what}: ${redact(err.message)}`, {
            status: 0,
            code: "connection_failed",
            cause: err,
          });
        }
        throw err;
      }
      return { count, meta: rest.meta };
    });
  }

  /**
   * The paging both lists share: `read` adds one page's items and says how many and its `meta`.
   * Once the first page has announced the last one, the rest are read {@link PARALLEL_PAGES} at a time
   * (the same requests, sooner: a 200-page list waited on each page in turn) and taken in order, each
   * still checked to name the next page; a page that ends the list early ends it there (the at most
   * three pages read ahead of it are requests spent for nothing: a list shrinking while it is read).
   */
  async #paginate<R>(
    what: string,
    read: (page: number, items: R[]) => Promise<{ count: number; meta: unknown }>,
  ): Promise<R[]> {
    const items: R[] = [];
    const first = await read(1, items);
    const announced = pagination(first.meta)?.last_page;
    if (!Number.isSafeInteger(announced) || announced! <= 0) {
      // No last page said: one page after the other, as long as each names the next.
      let last = first;
      for (let page = 1;; page++) {
        if (!this.#continues(what, page, last, MAX_PAGES)) return items;
        last = await read(page + 1, items);
      }
    }
    const lastPage = Math.min(MAX_PAGES, announced!);
    if (!this.#continues(what, 1, first, lastPage)) return items;
    const pages = new Map<number, Promise<{ items: R[]; count: number; meta: unknown }>>();
    const start = (page: number) => {
      if (page > lastPage || pages.has(page)) return;
      const own: R[] = [];
      const reading = read(page, own).then((r) => ({ ...r, items: own }));
      reading.catch(() => {}); // a page read ahead and not needed must not fail unobserved
      pages.set(page, reading);
    };
    for (let page = 2; page < 2 + PARALLEL_PAGES; page++) start(page);
    for (let page = 2;; page++) {
      const result = await pages.get(page)!;
      pages.delete(page);
      items.push(...result.items);
      if (!this.#continues(what, page, result, lastPage)) return items;
      start(page + PARALLEL_PAGES);
    }
  }

  /** Whether the list goes on after `page` (it names page + 1 within `lastPage`); throws when it lies. */
  #continues(what: string, page: number, read: { count: number; meta: unknown }, lastPage: number): boolean {
    const next = pagination(read.meta)?.next_page;
    if (!next || read.count === 0) return false;
    if (next !== page + 1) {
      throw new CloudApiError(`${what}: page ${page} names page ${next} as the next one; stopped`, {
        status: 200,
        code: "invalid_response",
      });
    }
    if (next > lastPage) {
      throw new CloudApiError(
        `${what}: more pages than ${
          lastPage === MAX_PAGES ? `the ${MAX_PAGES} this CCM reads` : "announced"
        }; stopped`,
        { status: 200, code: "invalid_response" },
      );
    }
    return true;
  }
}

/** A list page's `meta.pagination`, if it has one. */
function pagination(meta: unknown): { next_page?: number | null; last_page?: number | null } | undefined {
  return (meta as { pagination?: { next_page?: number | null; last_page?: number | null } } | undefined)
    ?.pagination;
}
