/**
 * Waits for actions, batching the polls of every waiting caller into one
 * `GET /actions?id=..&id=..` per interval (25 IDs per request), so many concurrent mutations cost
 * few polls.
 *
 * @module
 */
import type { HcloudClient } from "./client.ts";
import { CloudApiError } from "./errors.ts";
import { type Clock, sleepOn, SYSTEM_CLOCK } from "../lib/clock.ts";
import { currentSignal, detached } from "../lib/cancellation.ts";

/** What the waiter reads of an action (any API answer's `action`). */
export interface ActionLike {
  /** The action's ID. */
  id: number;
  /** `running`, `success` or `error`. */
  status: string;
  /** What it does (`add_target`), for messages. */
  command?: string;
  /** Why it failed, when it did. */
  error?: { code: string; message: string } | null;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
  command: string;
}

/** One poll loop shared by all waits. */
export class ActionWaiter {
  readonly #client: HcloudClient;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #pending = new Map<number, Waiter[]>();
  #looping = false;

  /**
   * `intervalMs`: how often the running actions are polled (default 500 ms, in one request), on
   * `clock` (default the system's).
   */
  constructor(client: HcloudClient, options: { intervalMs?: number; clock?: Clock } = {}) {
    this.#client = client;
    this.#intervalMs = options.intervalMs ?? 500;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
  }

  /**
   * Resolves when `action` succeeded; rejects with its error code when it failed, or with the
   * reason when the current work is cancelled (the shared poll loop goes on for the other waiters).
   */
  wait(action: ActionLike): Promise<void> {
    const settled = settle(action);
    if (settled !== undefined) return settled;
    const signal = currentSignal();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const list = this.#pending.get(action.id) ?? [];
      const cancelled = () => {
        const left = (this.#pending.get(action.id) ?? []).filter((w) => w !== waiter);
        if (left.length) this.#pending.set(action.id, left);
        else this.#pending.delete(action.id);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener("abort", cancelled);
          resolve();
        },
        reject: (err) => {
          signal?.removeEventListener("abort", cancelled);
          reject(err);
        },
        command: action.command ?? "action",
      };
      signal?.addEventListener("abort", cancelled, { once: true });
      list.push(waiter);
      this.#pending.set(action.id, list);
      // The loop serves every waiter: it must not end with the signal of the one that started it.
      if (!this.#looping) void detached(() => this.#loop());
    });
  }

  async #loop(): Promise<void> {
    this.#looping = true;
    try {
      while (this.#pending.size > 0) {
        await sleepOn(this.#clock, this.#intervalMs);
        const ids = [...this.#pending.keys()];
        for (let i = 0; i < ids.length; i += 25) await this.#poll(ids.slice(i, i + 25));
      }
    } finally {
      this.#looping = false;
    }
  }

  async #poll(ids: number[]): Promise<void> {
    let actions: ActionLike[];
    try {
      const data = await this.#client.call(
        "poll actions",
        this.#client.api.GET("/actions", { params: { query: { id: ids } } }),
      );
      actions = data.actions;
    } catch (err) {
      // A failed poll is retried next interval unless the API rejected the request itself.
      if (err instanceof CloudApiError && err.isTransient) return;
      for (const id of ids) this.#finish(id, (w) => w.reject(err));
      return;
    }
    const seen = new Set<number>();
    for (const action of actions ?? []) {
      seen.add(action.id);
      const settled = settle(action);
      if (settled) this.#finish(action.id, (w) => settled.then(w.resolve, w.reject));
    }
    for (const id of ids) {
      if (!seen.has(id)) {
        this.#finish(
          id,
          (w) =>
            w.reject(
              new CloudApiError(`action ${id} (${w.command}) not found`, { status: 404, code: "not_found" }),
            ),
        );
      }
    }
  }

  #finish(id: number, apply: (w: Waiter) => void): void {
    const waiters = this.#pending.get(id) ?? [];
    this.#pending.delete(id);
    waiters.forEach(apply);
  }
}

function settle(action: ActionLike): Promise<void> | undefined {
  if (action.status === "success") return Promise.resolve();
  if (action.status === "error") {
    const code = action.error?.code ?? "action_failed";
    return Promise.reject(
      new CloudApiError(
        `action ${action.command ?? action.id} failed: ${action.error?.message ?? code} (${code})`,
        { status: 200, code },
      ),
    );
  }
  return undefined;
}
