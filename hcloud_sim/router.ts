/**
 * Route table plumbing shared by the simulator's resource handlers.
 *
 * @module
 */
import { faults, paginate, type Reply, type SimRequest, sortItems } from "./http_kit.ts";
import { parseLabelSelector } from "../lib/label_selector.ts";
import type { World } from "./world.ts";

/** What handlers can reach. */
export interface HandlerContext {
  world: World;
  /** `http://host:port/v1`, for Link headers. */
  baseUrl: string;
}

/** A request handler; `params` holds the path's `{placeholders}` (IDs already numbers-as-text). */
export type Handler = (req: SimRequest, params: Record<string, string>, ctx: HandlerContext) => Reply;

/** One route. */
export interface SimRoute {
  method: string;
  pattern: string;
  regex: RegExp;
  handler: Handler;
}

/** Builds a route; `{id}`-like placeholders match one path segment. */
export function route(method: string, pattern: string, handler: Handler): SimRoute {
  const regex = new RegExp(`^${pattern.replace(/\{(\w+)\}/g, "(?<$1>[^/]+)")}$`);
  return { method, pattern, regex, handler };
}

/** The object with `id` from `map`, or a 404 naming `what`. */
export function byId<T>(map: Map<number, T>, id: string, what: string): T {
  const n = Number(id);
  const item = Number.isInteger(n) ? map.get(n) : undefined;
  if (!item) throw faults.notFound(what);
  return item;
}

/** Applies `name` and `label_selector` filters, sorting and pagination to a collection. */
export function listResponse<T extends { id: number; name?: string; labels?: Record<string, string> }>(
  items: T[],
  req: SimRequest,
  ctx: HandlerContext,
  key: string,
  sortFields = ["id", "name", "created"],
  extraFilter?: (item: T) => boolean,
  render?: (item: T) => unknown,
): Reply {
  const name = req.query.get("name");
  const selectorText = req.query.get("label_selector");
  let selector;
  try {
    selector = selectorText ? parseLabelSelector(selectorText) : undefined;
  } catch (err) {
    throw faults.invalid({ label_selector: [(err as Error).message] });
  }
  const filtered = items.filter((item) =>
    (name === null || item.name === name) && (!selector || selector.matches(item.labels ?? {})) &&
    (!extraFilter || extraFilter(item))
  );
  return paginate(
    sortItems(filtered as unknown as Record<string, unknown>[], req, sortFields) as unknown as T[],
    req,
    ctx.baseUrl,
    key,
    render as ((item: T) => unknown) | undefined,
  );
}

/** `{ action }` with status 201. */
export function actionReply(action: unknown): Reply {
  return { status: 201, body: { action } };
}
