/**
 * An in-memory kube-apiserver behind the {@link KubeTransport} contract, for controller unit tests
 * (upstream's fake clientset): get, list, watch (newline-delimited events), create, update, merge
 * and strategic-merge patches (lists of objects with `type` merged by it), delete with a UID
 * precondition, and a log of every request. Label and field selectors are ignored; the real
 * apiserver suite covers them.
 *
 * It can lie the ways a real one does (issue 60 item 2): it keeps a history of changes, so a watch
 * from a resourceVersion replays what came after it, and one from before a {@link
 * MemoryApiserver.compact} gets `410 Gone`; an update or patch naming a resourceVersion that is not
 * the object's current one gets `409 Conflict`; `watchDelayMs` makes every watcher see events late.
 *
 * @module
 */
import type { KubeRequest, KubeTransport } from "../kube/transport.ts";

type Obj =
  & { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string } }
  & Record<
    string,
    unknown
  >;

interface Parsed {
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Splits `/api/v1/namespaces/ns/services/web/status` and `/apis/g/v/plural/name` into parts. */
function parsePath(path: string): Parsed {
  const parts = path.split("/").filter(Boolean);
  const rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  if (rest[0] === "namespaces" && rest.length >= 3) {
    return { namespace: rest[1], plural: rest[2], name: rest[3], subresource: rest[4] };
  }
  return { plural: rest[0], name: rest[1], subresource: rest[2] };
}

const status = (code: number, reason: string, message: string) =>
  Response.json({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message }, {
    status: code,
  });

/** Merges `patch` into `target` (RFC 7386; arrays of objects with `type` merge by it, as strategic merge does for conditions). */
function merge(target: unknown, patch: unknown, strategic: boolean): unknown {
  if (Array.isArray(patch)) {
    if (
      !strategic || !Array.isArray(target) || !patch.every((p) => p && typeof p === "object" && "type" in p)
    ) {
      return structuredClone(patch);
    }
    const out = structuredClone(target) as Record<string, unknown>[];
    for (const item of patch as Record<string, unknown>[]) {
      const i = out.findIndex((x) => x?.type === item.type);
      if (i >= 0) out[i] = merge(out[i], item, true) as Record<string, unknown>;
      else out.push(structuredClone(item));
    }
    return out;
  }
  if (!patch || typeof patch !== "object") return patch;
  const out: Record<string, unknown> = target && typeof target === "object" && !Array.isArray(target)
    ? { ...(target as Record<string, unknown>) }
    : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v, strategic);
  }
  return out;
}

/** Changes kept for watches from an older version. */
const MAX_HISTORY = 10_000;

/** See the module doc. */
export class MemoryApiserver implements KubeTransport {
  /** Objects by `plural` → `namespace/name`. */
  readonly #store = new Map<string, Map<string, Obj>>();
  readonly #watchers = new Set<Watcher>();
  #rv = 1;
  #uid = 1;
  /** Every change since the last compaction, in order: what a watch from an older version replays. */
  readonly #history: { plural: string; type: string; obj: Obj; previous?: Obj }[] = [];
  /** The oldest resourceVersion a watch may start from (a compaction moves it). */
  #oldest = 0;
  /** How late every watcher sees each event (a lagging apiserver or a slow connection). */
  watchDelayMs = 0;
  /** Every request as `VERB /path`, in order. */
  readonly requests: string[] = [];
  /** The time deletion timestamps are stamped with (a test's fake clock replays them). */
  now: () => number = Date.now;
  /** How a late event is held back (a test's fake clock makes the lag simulated time). */
  later: (fn: () => void, ms: number) => void = (fn, ms) => setTimeout(fn, ms);

  /** Stores `object` of `plural` directly (seeding), as created. */
  seed(plural: string, object: { metadata?: { name?: string; namespace?: string } }): void {
    this.#write(plural, structuredClone(object) as Obj, "ADDED");
  }

  /** The stored object, if any. */
  object<T>(plural: string, name: string, namespace?: string): T | undefined {
    return structuredClone(this.#store.get(plural)?.get(`${namespace ?? ""}/${name}`)) as T | undefined;
  }

  /** Every stored object of `plural`. */
  objects<T>(plural: string): T[] {
    return [...this.#store.get(plural)?.values() ?? []].map((o) => structuredClone(o) as T);
  }

  send(request: KubeRequest): Promise<Response> {
    this.requests.push(`${request.verb ?? request.method} ${request.path}`);
    const p = parsePath(request.path);
    const key = `${p.namespace ?? ""}/${p.name}`;
    const items = this.#store.get(p.plural) ?? new Map<string, Obj>();
    const body = request.body ? JSON.parse(request.body) : undefined;
    switch (request.method) {
      case "GET": {
        if (request.query?.get("watch") === "true") {
          return Promise.resolve(
            this.#watch(
              p,
              labelMatcher(request.query?.get("labelSelector")),
              request.signal,
              request.query?.get("resourceVersion") ?? undefined,
            ),
          );
        }
        if (p.name) {
          const found = items.get(key);
          return Promise.resolve(
            found ? Response.json(found) : status(404, "NotFound", `${p.plural} "${p.name}" not found`),
          );
        }
        const selector = labelMatcher(request.query?.get("labelSelector"));
        const list = [...items.values()].filter((o) =>
          (!p.namespace || o.metadata.namespace === p.namespace) && selector(o)
        );
        return Promise.resolve(
          Response.json({ items: list, metadata: { resourceVersion: String(this.#rv) } }),
        );
      }
      case "POST": {
        const obj = body as Obj;
        if (p.namespace) obj.metadata.namespace = p.namespace;
        if (!obj.metadata.name && (obj.metadata as { generateName?: string }).generateName) {
          obj.metadata.name = `${(obj.metadata as { generateName?: string }).generateName}${this.#uid}`;
        }
        if (items.has(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`)) {
          return Promise.resolve(
            status(409, "AlreadyExists", `${p.plural} "${obj.metadata.name}" already exists`),
          );
        }
        return Promise.resolve(Response.json(this.#write(p.plural, obj, "ADDED"), { status: 201 }));
      }
      case "PUT":
      case "PATCH": {
        const found = items.get(key);
        if (!found) return Promise.resolve(status(404, "NotFound", `${p.plural} "${p.name}" not found`));
        // Optimistic concurrency: a write naming a version that is no longer the object's is refused.
        const asked = (body as Partial<Obj> | undefined)?.metadata?.resourceVersion;
        if (asked !== undefined && asked !== found.metadata.resourceVersion) {
          return Promise.resolve(
            status(
              409,
              "Conflict",
              `Operation cannot be fulfilled on ${p.plural} "${p.name}": the object has been modified; ` +
                "please apply your changes to the latest version and try again",
            ),
          );
        }
        const next = request.method === "PUT"
          ? body as Obj
          : merge(found, body, (request.contentType ?? "").includes("strategic")) as Obj;
        next.metadata = { ...found.metadata, ...next.metadata, name: found.metadata.name };
        const meta = next.metadata as { deletionTimestamp?: string; finalizers?: string[] };
        // The last finalizer of an object being deleted removed: the object goes (as the apiserver).
        if (meta.deletionTimestamp && !meta.finalizers?.length) {
          return Promise.resolve(this.#remove(p.plural, key, next));
        }
        return Promise.resolve(Response.json(this.#write(p.plural, next, "MODIFIED")));
      }
      case "DELETE": {
        const found = items.get(key);
        if (!found) return Promise.resolve(status(404, "NotFound", `${p.plural} "${p.name}" not found`));
        const uid = (body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
        if (uid && uid !== found.metadata.uid) {
          return Promise.resolve(status(409, "Conflict", `precondition failed: UID in precondition: ${uid}`));
        }
        const meta = found.metadata as { deletionTimestamp?: string; finalizers?: string[] };
        // With finalizers the object stays, marked for deletion, until they are removed.
        if (meta.finalizers?.length) {
          if (meta.deletionTimestamp) return Promise.resolve(Response.json(found));
          const marked = structuredClone(found);
          (marked.metadata as { deletionTimestamp?: string }).deletionTimestamp = new Date(this.now())
            .toISOString();
          return Promise.resolve(Response.json(this.#write(p.plural, marked, "MODIFIED")));
        }
        return Promise.resolve(this.#remove(p.plural, key, found));
      }
    }
  }

  /** Removes the object and tells the watchers. */
  #remove(plural: string, key: string, found: Obj): Response {
    this.#store.get(plural)?.delete(key);
    const gone = { ...found, metadata: { ...found.metadata, resourceVersion: String(++this.#rv) } };
    this.#notify(plural, "DELETED", gone);
    return Response.json({ kind: "Status", status: "Success" });
  }

  /** Forgets the history (etcd's compaction): a watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.#history.length = 0;
    this.#oldest = this.#rv;
  }

  close(): void {
    for (const w of this.#watchers) w.push("");
    this.#watchers.clear();
  }

  #write(plural: string, obj: Obj, type: "ADDED" | "MODIFIED"): Obj {
    obj.metadata.uid ??= `uid-${this.#uid++}`;
    obj.metadata.resourceVersion = String(++this.#rv);
    (obj.metadata as { creationTimestamp?: string }).creationTimestamp ??= new Date(this.now()).toISOString();
    let items = this.#store.get(plural);
    if (!items) this.#store.set(plural, items = new Map());
    const key = `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    const previous = items.get(key);
    items.set(key, obj);
    this.#notify(plural, type, obj, previous);
    return structuredClone(obj);
  }

  #notify(plural: string, type: string, obj: Obj, previous?: Obj): void {
    this.#history.push({ plural, type, obj: structuredClone(obj), previous });
    // Bounded, as etcd's history is: what falls off is as if compacted.
    if (this.#history.length > MAX_HISTORY) {
      const dropped = this.#history.splice(0, this.#history.length - MAX_HISTORY);
      this.#oldest = Number(dropped[dropped.length - 1].obj.metadata.resourceVersion);
    }
    for (const w of this.#watchers) this.#deliver(w, plural, type, obj, previous);
  }

  /** Sends `w` the event, as the apiserver would show it through its selector (late, with a delay). */
  #deliver(w: Watcher, plural: string, type: string, obj: Obj, previous?: Obj): void {
    if (w.plural !== plural || (w.namespace && w.namespace !== obj.metadata.namespace)) return;
    // As the apiserver: an object that stops matching a watch's selector is DELETED for it.
    const matches = w.selector(obj);
    const matched = previous !== undefined && w.selector(previous);
    if (!matches && !(type === "MODIFIED" && matched)) return;
    const shown = !matches ? "DELETED" : type === "MODIFIED" && !matched ? "ADDED" : type;
    const line = JSON.stringify({ type: shown, object: obj }) + "\n";
    // A watch delivers in order: an event after a change of the delay waits for those held back,
    // also at the very moment they are due, before their timers have fired (explorer seed 83 of
    // workload 3: a Node's later versions overtook earlier ones, its provider ID came and went).
    const now = this.now();
    const at = Math.max(now + this.watchDelayMs, w.dueAt ?? 0);
    if (at > now || w.held) {
      w.dueAt = at;
      w.held = (w.held ?? 0) + 1;
      this.later(() => {
        w.held!--;
        w.push(line);
      }, at - now);
    } else w.push(line);
  }

  #watch(p: Parsed, selector: (o: Obj) => boolean, signal?: AbortSignal, from?: string): Response {
    const encoder = new TextEncoder();
    let watcher: Watcher;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        watcher = {
          plural: p.plural,
          namespace: p.namespace,
          selector,
          push: (line) => {
            try {
              if (line === "") controller.close();
              else controller.enqueue(encoder.encode(line));
            } catch { /* closed */ }
          },
        };
        const since = from === undefined || from === "" || from === "0" ? undefined : Number(from);
        if (since !== undefined && since < this.#oldest) {
          // As the apiserver: the watch opens, then ends with an ERROR event of status 410.
          const gone = { kind: "Status", status: "Failure", code: 410, reason: "Expired" };
          controller.enqueue(encoder.encode(
            JSON.stringify({
              type: "ERROR",
              object: { ...gone, message: `too old resource version: ${since} (${this.#oldest})` },
            }) +
              "\n",
          ));
          controller.close();
          return;
        }
        this.#watchers.add(watcher);
        // What came after the version it starts from, before anything new.
        if (since !== undefined) {
          for (const e of this.#history) {
            if (Number(e.obj.metadata.resourceVersion) > since) {
              this.#deliver(watcher, e.plural, e.type, e.obj, e.previous);
            }
          }
        }
        // As fetch's body does: an aborted request's stream fails with the abort's reason.
        signal?.addEventListener("abort", () => {
          this.#watchers.delete(watcher);
          try {
            controller.error(signal.reason);
          } catch { /* closed */ }
        }, { once: true });
      },
      cancel: () => {
        this.#watchers.delete(watcher);
      },
    });
    return new Response(stream, { headers: { "content-type": "application/json" } });
  }
}

/** A watch: what it covers and where its events go. */
interface Watcher {
  plural: string;
  namespace?: string;
  selector: (o: Obj) => boolean;
  push: (line: string) => void;
  /** When its last held-back event is due (events never overtake one another, as in a real watch). */
  dueAt?: number;
  /** Events held back and not yet sent: a new one queues behind them whatever the delay. */
  held?: number;
}

/** Equality label selectors (`a=b,c=d`, what the CCM sends); absent: everything. */
function labelMatcher(selector: string | null | undefined): (o: Obj) => boolean {
  if (!selector) return () => true;
  const pairs = selector.split(",").map((p) => p.split("=") as [string, string]);
  return (o) => {
    const labels = (o.metadata as { labels?: Record<string, string> }).labels ?? {};
    return pairs.every(([k, v]) => labels[k] === v);
  };
}
