/**
 * The simulator's request/response vocabulary: API errors with Hetzner's codes, request-body
 * validation that names every bad field, and pagination with `meta` and `Link` headers.
 *
 * @module
 */

/** An error answer: `{"error":{"code","message","details"}}` with an HTTP status. */
export class ApiFault extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown = null,
  ) {
    super(message);
  }
  /** The JSON body Hetzner sends. */
  body(): unknown {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

/** Common faults. */
export const faults = {
  notFound: (what: string) => new ApiFault(404, "not_found", `${what} not found`),
  invalid: (fields: Record<string, string[]>) => {
    const names = Object.keys(fields);
    return new ApiFault(
      422,
      "invalid_input",
      `invalid input in field${names.length > 1 ? "s" : ""} ${names.map((n) => `'${n}'`).join(", ")}`,
      { fields: names.map((name) => ({ name, messages: fields[name] })) },
    );
  },
  locked: () => new ApiFault(423, "locked", "resource is locked by a running action"),
  protectedResource: () => new ApiFault(423, "protected", "resource is protected"),
  conflict: (message = "a change is currently being performed on this resource") =>
    new ApiFault(409, "conflict", message),
  uniqueness: (field: string) =>
    new ApiFault(409, "uniqueness_error", `${field} is already used`, { fields: [{ name: field }] }),
  json: (message: string) => new ApiFault(400, "json_error", `invalid JSON: ${message}`),
  unauthorized: () => new ApiFault(401, "unauthorized", "unable to authenticate"),
  code: (status: number, code: string, message: string, details: unknown = null) =>
    new ApiFault(status, code, message, details),
};

/** A parsed request as handlers see it. */
export interface SimRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

/** What a handler returns. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Check<T> = { required?: boolean; check?: (v: T) => string | undefined };

/**
 * Reads fields of a JSON body, collecting problems; `done()` throws one `invalid_input` naming
 * every bad field.
 */
export class BodyReader {
  readonly #body: Record<string, unknown>;
  readonly #errors: Record<string, string[]> = {};
  readonly #prefix: string;

  constructor(body: unknown, prefix = "") {
    this.#prefix = prefix;
    if (body === undefined || body === null) this.#body = {};
    else if (typeof body !== "object" || Array.isArray(body)) {
      this.#body = {};
      this.fail("", "must be a JSON object");
    } else this.#body = body as Record<string, unknown>;
  }

  /** Records a problem with `field`. */
  fail(field: string, message: string): void {
    const name = `${this.#prefix}${field}` || "body";
    (this.#errors[name] ??= []).push(message);
  }

  /** True when the body has `field` (even if null). */
  has(field: string): boolean {
    return Object.hasOwn(this.#body, field);
  }

  string(field: string, options: Check<string> = {}): string | undefined {
    return this.#read(field, "string", (v) => typeof v === "string", options);
  }
  int(field: string, options: Check<number> = {}): number | undefined {
    return this.#read(field, "integer", (v) => Number.isInteger(v), options);
  }
  /** A field the API types as "ID or name": a string, or an integer ID (returned as text). */
  idOrName(field: string, options: Check<string> = {}): string | undefined {
    const v = this.#body[field];
    const text = Number.isInteger(v) ? String(v) : v;
    return this.#read(field, "ID or name", (x) => typeof x === "string", options, text);
  }
  bool(field: string, options: Check<boolean> = {}): boolean | undefined {
    return this.#read(field, "boolean", (v) => typeof v === "boolean", options);
  }
  object(field: string, options: Check<Record<string, unknown>> = {}): Record<string, unknown> | undefined {
    return this.#read(field, "object", (v) => !!v && typeof v === "object" && !Array.isArray(v), options);
  }
  array(field: string, options: Check<unknown[]> = {}): unknown[] | undefined {
    return this.#read(field, "array", Array.isArray, options);
  }
  /** A nested reader whose field names are prefixed (`services[0].`). */
  nested(value: unknown, prefix: string): BodyReader {
    return new BodyReader(value, `${this.#prefix}${prefix}`);
  }
  /** Merges a nested reader's problems into this one. */
  absorb(other: BodyReader): void {
    for (const [k, v] of Object.entries(other.#errors)) (this.#errors[k] ??= []).push(...v);
  }
  /** Throws `invalid_input` if any field was bad. */
  done(): void {
    if (Object.keys(this.#errors).length) throw faults.invalid(this.#errors);
  }

  #read<T>(
    field: string,
    type: string,
    is: (v: unknown) => boolean,
    options: Check<T>,
    v: unknown = this.#body[field],
  ): T | undefined {
    if (v === undefined || v === null) {
      if (options.required) this.fail(field, "is required");
      return undefined;
    }
    if (!is(v)) {
      this.fail(field, `must be a${/^[aeio]/.test(type) ? "n" : ""} ${type}`);
      return undefined;
    }
    const problem = options.check?.(v as T);
    if (problem) {
      this.fail(field, problem);
      return undefined;
    }
    return v as T;
  }
}

/**
 * Parses `page`/`per_page` and returns one page plus `meta` and a `Link` header; `render` shows each
 * item of the page (only the page's: a list of 10 000 servers is not copied for every page of 50).
 */
export function paginate<T>(
  items: T[],
  req: SimRequest,
  baseUrl: string,
  key: string,
  render: (item: T) => unknown = (item) => item,
): Reply {
  const perPageRaw = Number(req.query.get("per_page") ?? 25);
  const pageRaw = Number(req.query.get("page") ?? 1);
  const bad: Record<string, string[]> = {};
  if (!Number.isInteger(perPageRaw) || perPageRaw < 1) bad.per_page = ["must be a positive integer"];
  if (!Number.isInteger(pageRaw) || pageRaw < 1) bad.page = ["must be a positive integer"];
  if (Object.keys(bad).length) throw faults.invalid(bad);
  // Undocumented: per_page above 50 is clamped (hcloud-go always asks for 50).
  const perPage = Math.min(50, perPageRaw);
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  const page = pageRaw;
  const slice = items.slice((page - 1) * perPage, page * perPage).map(render);
  const next = page < lastPage ? page + 1 : null;
  const previous = page > 1 ? Math.min(page - 1, lastPage) : null;
  const link = (p: number, rel: string) => {
    const q = new URLSearchParams(req.query);
    q.set("page", String(p));
    q.set("per_page", String(perPage));
    return `<${baseUrl}${req.path}?${q}>; rel="${rel}"`;
  };
  const links = [previous && link(previous, "prev"), next && link(next, "next"), link(lastPage, "last")]
    .filter(Boolean);
  return {
    status: 200,
    headers: { link: links.join(", ") },
    body: {
      [key]: slice,
      meta: {
        pagination: {
          page,
          per_page: perPage,
          previous_page: previous,
          next_page: next,
          last_page: lastPage,
          total_entries: items.length,
        },
      },
    },
  };
}

/** Sorts by `sort=field[:asc|:desc]` query values among `allowed` fields. */
export function sortItems<T extends Record<string, unknown>>(
  items: T[],
  req: SimRequest,
  allowed: string[],
): T[] {
  const sorts = req.query.getAll("sort");
  if (sorts.length === 0) return [...items].sort((a, b) => Number(a.id) - Number(b.id));
  const keys = sorts.map((s) => {
    const [field, dir = "asc"] = s.split(":");
    if (!allowed.includes(field) || (dir !== "asc" && dir !== "desc")) {
      throw faults.invalid({ sort: [`invalid sort "${s}"`] });
    }
    return { field, sign: dir === "desc" ? -1 : 1 };
  });
  return [...items].sort((a, b) => {
    for (const { field, sign } of keys) {
      const x = a[field] as string | number;
      const y = b[field] as string | number;
      if (x < y) return -sign;
      if (x > y) return sign;
    }
    return 0;
  });
}
