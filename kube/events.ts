/**
 * Records core/v1 Events the way client-go's recorder does: an identical event within the cache
 * window bumps `count` and `lastTimestamp` of the existing Event instead of creating another, more
 * than 10 similar events (same object and reason, other messages) in 10 minutes are combined, and a
 * per-object spam filter (burst 25, one more every 5 minutes) caps the volume.
 *
 * @module
 */
import type { Event, ObjectReference } from "kubernetes-types/core/v1.d.ts";
import type { KubeClient } from "./client.ts";
import { KubeApiError } from "./errors.ts";
import { EVENTS, type ResourceType } from "./resources.ts";
import { logger, redact } from "../lib/log.ts";
import { processRandom } from "../lib/random.ts";

/** Event type. */
export type EventType = "Normal" | "Warning";

interface Recorded {
  name: string;
  namespace: string;
  count: number;
}

const MAX_CACHE = 4096;
const SIMILAR_WINDOW_MS = 10 * 60_000;
const SIMILAR_MAX = 10;
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 5 * 60_000;

/** Sends Events for one component (e.g. `cloud-node-controller`). */
export class EventRecorder {
  readonly #client: KubeClient;
  readonly #component: string;
  readonly #host: string;
  readonly #recorded = new Map<string, Recorded>();
  readonly #similar = new Map<string, { messages: Set<string>; since: number }>();
  readonly #spam = new Map<string, { tokens: number; at: number }>();
  readonly #pending = new Set<Promise<void>>();
  /** The last write per Event key, which the next one for that key waits for. */
  readonly #writing = new Map<string, Promise<void>>();
  readonly #log = logger("events");

  readonly #now: () => number;

  /**
   * A recorder writing through `client` as `component` (on `host`, the event's `source.host`); `now`
   * is the clock its timestamps, names and spam buckets read (a test's fake clock replays a run's
   * events).
   */
  constructor(client: KubeClient, component: string, host = "", now: () => number = Date.now) {
    this.#client = client;
    this.#component = component;
    this.#host = host;
    this.#now = now;
  }

  /** Records an event about `object` of `type`. Never throws; failures are logged. */
  event<T>(type: ResourceType<T>, object: T, eventType: EventType, reason: string, message: string): void {
    const meta =
      (object as { metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } })
        .metadata ?? {};
    const ref: ObjectReference = {
      apiVersion: type.apiVersion,
      kind: type.kind,
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
    };
    const write = this.#record(ref, eventType, reason, capMessage(redact(message))).catch((err) =>
      this.#log.warning("could not record event {reason} on {kind} {name}: {error}", {
        reason,
        kind: ref.kind,
        name: ref.name,
        error: err instanceof Error ? err.message : String(err),
      })
    );
    this.#pending.add(write);
    write.finally(() => this.#pending.delete(write));
  }

  /** Waits for every event write started so far. */
  async flush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  async #record(ref: ObjectReference, type: EventType, reason: string, message: string): Promise<void> {
    const objectKey = `${ref.kind}/${ref.namespace ?? ""}/${ref.name}/${ref.uid ?? ""}`;
    if (!this.#allow(objectKey)) return;
    const now = new Date(this.#now());
    const similarKey = `${objectKey}/${type}/${reason}`;
    const similar = this.#similar.get(similarKey);
    if (!similar || now.getTime() - similar.since > SIMILAR_WINDOW_MS) {
      this.#similar.set(similarKey, { messages: new Set([message]), since: now.getTime() });
    } else {
      similar.messages.add(message);
      if (similar.messages.size > SIMILAR_MAX) message = `(combined from similar events): ${message}`;
    }
    const key = `${similarKey}/${message}`;
    // One write at a time per key: a repeat sent while the first Event is still being created must
    // bump that Event's count, not create a second one (nor two patches lose an increment).
    const before = this.#writing.get(key) ?? Promise.resolve();
    const write = before.then(() => this.#write(key, ref, type, reason, message, now));
    const tail = write.catch(() => {});
    this.#writing.set(key, tail);
    tail.finally(() => {
      if (this.#writing.get(key) === tail) this.#writing.delete(key);
    });
    return await write;
  }

  async #write(
    key: string,
    ref: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
    now: Date,
  ): Promise<void> {
    const namespace = ref.namespace || "default";
    const previous = this.#recorded.get(key);
    if (previous) {
      try {
        await this.#client.patch(EVENTS, previous.name, "merge", {
          count: previous.count + 1,
          lastTimestamp: now.toISOString(),
        }, { namespace: previous.namespace });
        previous.count++;
        return;
      } catch (err) {
        if (!(err instanceof KubeApiError && err.isNotFound)) throw err;
        this.#recorded.delete(key); // the Event expired (TTL 1 h): create a fresh one
      }
    }
    const event: Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: {
        name: `${ref.name}.${(now.getTime() * 1e6 + Math.floor(processRandom() * 1e6)).toString(16)}`,
        namespace,
      },
      involvedObject: ref,
      reason,
      message,
      type,
      count: 1,
      firstTimestamp: now.toISOString(),
      lastTimestamp: now.toISOString(),
      source: { component: this.#component, host: this.#host || undefined },
      reportingComponent: this.#component,
      reportingInstance: this.#host || this.#component,
    };
    const created = await this.#client.create(EVENTS, event, { namespace });
    if (this.#recorded.size >= MAX_CACHE) this.#recorded.delete(this.#recorded.keys().next().value!);
    this.#recorded.set(key, {
      name: created.metadata!.name!,
      namespace,
      count: 1,
    });
  }

  #allow(objectKey: string): boolean {
    const now = this.#now();
    const bucket = this.#spam.get(objectKey) ?? { tokens: SPAM_BURST, at: now };
    bucket.tokens = Math.min(SPAM_BURST, bucket.tokens + (now - bucket.at) / SPAM_REFILL_MS);
    bucket.at = now;
    if (this.#spam.size >= MAX_CACHE && !this.#spam.has(objectKey)) {
      this.#spam.delete(this.#spam.keys().next().value!);
    }
    this.#spam.set(objectKey, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

/** Event messages are capped (Kubernetes keeps at most 1 kB of an Event's note). */
export const EVENT_MESSAGE_MAX = 1024;

/** `message`, cut to {@link EVENT_MESSAGE_MAX} characters with a marker saying so. */
export function capMessage(message: string): string {
  if (message.length <= EVENT_MESSAGE_MAX) return message;
  const marker = ` … (${message.length - (EVENT_MESSAGE_MAX - 40)} more characters)`;
  return message.slice(0, EVENT_MESSAGE_MAX - 40) + marker;
}
