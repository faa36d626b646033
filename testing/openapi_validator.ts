/**
 * Validates simulator responses against Hetzner's OpenAPI spec with ajv. OpenAPI 3.0's
 * `nullable` is rewritten to JSON Schema (`anyOf` with `null`) first.
 *
 * @module
 */
import { Ajv, type ValidateFunction } from "ajv";

const SPEC = new URL("../hcloud_api/openapi.json", import.meta.url);

type Json = Record<string, unknown>;

function nullableToJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableToJsonSchema);
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = nullableToJsonSchema(v);
  if (out.nullable === true) {
    delete out.nullable;
    return { anyOf: [out, { type: "null" }] };
  }
  return out;
}

/**
 * The one API change newer than the spec copy that the simulator models: Primary IPs assigned to load
 * balancers (documented by the official CCM since October 2026, in hcloud-go since v2.52), so a
 * Primary IP's `assignee_type` may be `load_balancer`. Everything else is validated as the copy says.
 */
function newerThanSpec(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(newerThanSpec);
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = newerThanSpec(v);
  const props = out.properties as Record<string, Json> | undefined;
  const assignee = props?.assignee_type;
  if (Array.isArray(assignee?.enum) && assignee.enum.length === 1 && assignee.enum[0] === "server") {
    props!.assignee_type = { ...assignee, enum: ["server", "load_balancer"] };
  }
  return out;
}

/** Checks `(method, route pattern, status, body)` against the spec; collects violations. */
export class OpenApiValidator {
  readonly violations: string[] = [];
  readonly #spec: Json;
  readonly #ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false });
  readonly #cache = new Map<string, ValidateFunction | null | undefined>();
  /** Responses checked so far. */
  checked = 0;

  private constructor(spec: Json) {
    this.#spec = spec;
  }

  /** Loads the spec from `hcloud_api/openapi.json`, with {@link newerThanSpec} applied. */
  static async load(): Promise<OpenApiValidator> {
    return new OpenApiValidator(
      newerThanSpec(nullableToJsonSchema(JSON.parse(await Deno.readTextFile(SPEC)))) as Json,
    );
  }

  /** Validates one response; `route` is `METHOD /path/{id}` as the simulator names it. */
  check(route: string, status: number, body: unknown): void {
    const [method, path] = route.split(" ");
    const validate = this.#validator(method.toLowerCase(), path, status);
    if (validate === null) {
      this.violations.push(`${route} ${status}: no such response in the spec`);
      return;
    }
    if (validate === undefined) return; // no body documented (204)
    this.checked++;
    if (!validate(body)) {
      const e = validate.errors?.[0];
      this.violations.push(
        `${route} ${status}: ${e?.instancePath || "/"} ${e?.message} ${JSON.stringify(e?.params)}`,
      );
    }
  }

  #validator(method: string, path: string, status: number): ValidateFunction | null | undefined {
    const key = `${method} ${path} ${status}`;
    if (this.#cache.has(key)) return this.#cache.get(key);
    const op = ((this.#spec.paths as Json)[path] as Json | undefined)?.[method] as Json | undefined;
    if (!op && status >= 400) {
      // An unknown endpoint still answers with the documented error envelope.
      const fn = this.#ajv.compile({
        $id: `urn:resp:${key.replace(/[^\w]/g, "_")}`,
        $ref: "#/components/schemas/error_response",
        components: this.#spec.components,
      });
      this.#cache.set(key, fn);
      return fn;
    }
    const responses = op?.responses as Json | undefined;
    const response = (responses?.[String(status)] ?? responses?.[`${String(status)[0]}xx`]) as
      | Json
      | undefined;
    if (!response) {
      this.#cache.set(key, null);
      return null;
    }
    const schema = ((response.content as Json | undefined)?.["application/json"] as Json | undefined)?.schema;
    if (!schema) {
      const none = status === 204 ? undefined : null;
      this.#cache.set(key, none);
      return none;
    }
    const fn = this.#ajv.compile({
      $id: `urn:resp:${key.replace(/[^\w]/g, "_")}`,
      ...(schema as Json),
      components: this.#spec.components,
    });
    this.#cache.set(key, fn);
    return fn;
  }
}
