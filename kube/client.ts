/**
 * A typed Kubernetes REST client on top of a {@link KubeTransport}: get, list (paginated), watch,
 * create, update, patch (four patch types), delete, and status subresources.
 *
 * @module
 */
import { KubeApiError, type KubeStatus } from "./errors.ts";
import { resourcePath, type ResourceType } from "./resources.ts";
import type { KubeRequest, KubeTransport } from "./transport.ts";
import { decodeWatchStream, type WatchEvent } from "./watch.ts";

export type { KubeRequest, KubeStatus, KubeTransport, ResourceType, WatchEvent };

/** The four patch formats the apiserver accepts. */
export type PatchType = "merge" | "strategic" | "json" | "apply";

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  json: "application/json-patch+json",
  apply: "application/apply-patch+yaml",
};

/** A list response: items plus the resourceVersion to watch from. */
export interface ObjectList<T> {
  /** The objects of this page. */
  items: T[];
  /** The version to watch from, and the token of the next page if there is one. */
  metadata: { resourceVersion: string; continue?: string };
}

/** Where an object is and how to reach it. */
export interface ObjectOptions {
  /** The namespace of a namespaced resource. */
  namespace?: string;
  /** A subresource such as `status`. */
  subresource?: string;
  /** Cancels the request. */
  signal?: AbortSignal;
}

/** List and watch filters. */
export interface ListOptions {
  /** Only this namespace (all namespaces when unset). */
  namespace?: string;
  /** A label selector, e.g. `app=web`. */
  labelSelector?: string;
  /** A field selector, e.g. `metadata.name=n1`. */
  fieldSelector?: string;
  /** Page size; 0 or unset asks for everything at once. */
  limit?: number;
  /** The previous page's `metadata.continue`. */
  continueToken?: string;
  /** List or watch from this version. */
  resourceVersion?: string;
  /** Cancels the request. */
  signal?: AbortSignal;
}

/** Watch options in addition to the list filters. */
export interface WatchOptions extends ListOptions {
  /** Ask the server for BOOKMARK events (default true). */
  allowBookmarks?: boolean;
  /** Server-side end of the watch. */
  timeoutSeconds?: number;
}

/** Patch options. */
export interface PatchOptions extends ObjectOptions {
  /** Field manager (required for apply; defaults to the client's). */
  fieldManager?: string;
  /** Apply only: take ownership of conflicting fields. */
  force?: boolean;
}

/** Delete options. */
export interface DeleteOptions extends ObjectOptions {
  /** Delete only the object with this UID or version (not a newer one of the same name). */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** What happens to the object's dependents. */
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  /** Seconds before the object is deleted (0: at once). */
  gracePeriodSeconds?: number;
}

interface Named {
  metadata?: { name?: string; namespace?: string };
}

/**
 * Typed access to the Kubernetes API. Every failure is a {@link KubeApiError}.
 *
 * @example Against a transport that answers from memory (tests swap the transport, not the client)
 * ```ts
 * import { KubeClient, type KubeTransport } from "./client.ts";
 * import { NODES } from "./resources.ts";
 *
 * const transport: KubeTransport = {
 *   send: (request) =>
 *     Promise.resolve(Response.json({ metadata: { name: request.path.split("/").pop() } })),
 *   close: () => {},
 * };
 * const client = new KubeClient(transport);
 * const node = await client.get(NODES, "n1");
 * if (node.metadata?.name !== "n1") throw new Error("the example is wrong");
 * ```
 */
export class KubeClient {
  /**
   * A client on `transport`.
   *
   * @param transport Sends the requests (HTTP to an apiserver, or anything that answers like one).
   * @param fieldManager The field manager named on writes (apply needs one).
   */
  constructor(readonly transport: KubeTransport, readonly fieldManager = "deno-ccm") {}

  /** Reads one object. */
  get<T>(type: ResourceType<T>, name: string, options: ObjectOptions = {}): Promise<T> {
    return this.#json<T>({
      method: "GET",
      verb: "get",
      path: this.#path(type, name, options),
      signal: options.signal,
    });
  }

  /** Reads one page of a collection. */
  list<T>(type: ResourceType<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    const query = listQuery(options);
    if (options.limit) query.set("limit", String(options.limit));
    if (options.continueToken) query.set("continue", options.continueToken);
    return this.#json<ObjectList<T>>({
      method: "GET",
      verb: "list",
      path: resourcePath(type, { namespace: options.namespace }),
      query,
      signal: options.signal,
    });
  }

  /**
   * Reads a whole collection page by page (`limit` default 500). If a continue token expires midway,
   * starts over once without paging, as client-go's pager does. `transform` runs on each page's
   * items as it arrives, so a caller that trims objects never holds more than one untrimmed page.
   */
  async listAll<T>(
    type: ResourceType<T>,
    options: ListOptions = {},
    transform: (item: T) => T = (item) => item,
  ): Promise<ObjectList<T>> {
    const limit = options.limit ?? 500;
    const items: T[] = [];
    let token: string | undefined;
    try {
      for (;;) {
        const page = await this.list(type, { ...options, limit, continueToken: token });
        for (const item of page.items) items.push(transform(item));
        token = page.metadata.continue;
        if (!token) return { items, metadata: { resourceVersion: page.metadata.resourceVersion } };
      }
    } catch (err) {
      if (!(token && err instanceof KubeApiError && err.isGone)) throw err;
      const all = await this.list(type, { ...options, limit: 0 });
      return { ...all, items: all.items.map(transform) };
    }
  }

  /** Opens a watch and yields its events; the generator ends when the server closes the stream. */
  async *watch<T>(type: ResourceType<T>, options: WatchOptions = {}): AsyncGenerator<WatchEvent<T>> {
    const query = listQuery(options);
    query.set("watch", "true");
    if (options.allowBookmarks ?? true) query.set("allowWatchBookmarks", "true");
    if (options.timeoutSeconds) query.set("timeoutSeconds", String(options.timeoutSeconds));
    const request: KubeRequest = {
      method: "GET",
      verb: "watch",
      path: resourcePath(type, { namespace: options.namespace }),
      query,
      signal: options.signal,
      watch: true,
    };
    const response = await this.transport.send(request);
    if (!response.ok) throw await KubeApiError.fromResponse(`WATCH ${request.path}`, response);
    if (!response.body) return;
    yield* decodeWatchStream<T>(response.body);
  }

  /** Creates an object (in `options.namespace`, else the object's own namespace). */
  create<T>(type: ResourceType<T>, object: T, options: ObjectOptions = {}): Promise<T> {
    const namespace = options.namespace ?? (object as Named).metadata?.namespace;
    return this.#json<T>({
      method: "POST",
      verb: "create",
      path: resourcePath(type, { namespace, subresource: undefined }),
      body: JSON.stringify(object),
      contentType: "application/json",
      signal: options.signal,
    });
  }

  /** Replaces an object (PUT); its `metadata.resourceVersion` makes it conditional. */
  update<T>(type: ResourceType<T>, object: T, options: ObjectOptions = {}): Promise<T> {
    const meta = (object as Named).metadata ?? {};
    if (!meta.name) throw new TypeError(`update of a ${type.kind} without metadata.name`);
    return this.#json<T>({
      method: "PUT",
      verb: "update",
      path: this.#path(type, meta.name, { ...options, namespace: options.namespace ?? meta.namespace }),
      body: JSON.stringify(object),
      contentType: "application/json",
      signal: options.signal,
    });
  }

  /** Patches an object with a merge, strategic-merge, JSON or server-side-apply patch. */
  patch<T>(
    type: ResourceType<T>,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions = {},
  ): Promise<T> {
    const query = new URLSearchParams();
    if (patchType === "apply" || options.fieldManager) {
      query.set("fieldManager", options.fieldManager ?? this.fieldManager);
    }
    if (patchType === "apply" && options.force) query.set("force", "true");
    return this.#json<T>({
      method: "PATCH",
      verb: "patch",
      path: this.#path(type, name, options),
      query,
      body: JSON.stringify(patch),
      contentType: PATCH_CONTENT_TYPES[patchType],
      signal: options.signal,
    });
  }

  /** Deletes an object. A missing object is a {@link KubeApiError} with `isNotFound`. */
  async delete(type: ResourceType, name: string, options: DeleteOptions = {}): Promise<void> {
    const body: Record<string, unknown> = { kind: "DeleteOptions", apiVersion: "v1" };
    if (options.preconditions) body.preconditions = options.preconditions;
    if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    await this.#json<unknown>({
      method: "DELETE",
      verb: "delete",
      path: this.#path(type, name, options),
      body: JSON.stringify(body),
      contentType: "application/json",
      signal: options.signal,
    });
  }

  #path(type: ResourceType, name: string, options: ObjectOptions): string {
    if (type.namespaced && !options.namespace) {
      throw new TypeError(`${type.kind} ${name}: namespace is required`);
    }
    return resourcePath(type, { namespace: options.namespace, name, subresource: options.subresource });
  }

  async #json<T>(request: KubeRequest): Promise<T> {
    const response = await this.transport.send(request);
    if (!response.ok) throw await KubeApiError.fromResponse(`${request.method} ${request.path}`, response);
    const text = await response.text();
    try {
      return (text ? JSON.parse(text) : undefined) as T;
    } catch (err) {
      throw new KubeApiError(
        `${request.method} ${request.path}`,
        response.status,
        "InvalidResponse",
        "response is not JSON",
        {
          cause: err,
        },
      );
    }
  }
}

function listQuery(options: ListOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (options.labelSelector) query.set("labelSelector", options.labelSelector);
  if (options.fieldSelector) query.set("fieldSelector", options.fieldSelector);
  if (options.resourceVersion !== undefined) query.set("resourceVersion", options.resourceVersion);
  return query;
}
