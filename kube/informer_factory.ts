/**
 * Shared informers: one list+watch per resource type, however many controllers read it.
 *
 * @module
 */
import type { KubeClient } from "./client.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import type { ResourceType } from "./resources.ts";

/** Hands out one {@link Informer} per resource type and runs them together. */
export class InformerFactory {
  readonly #client: KubeClient;
  readonly #defaults: InformerOptions;
  readonly #informers = new Map<string, Informer<unknown>>();
  #signal?: AbortSignal;
  readonly #runs: Promise<void>[] = [];

  readonly #transforms: Partial<Record<string, (object: unknown) => unknown>>;

  /** `transforms` by resource plural (e.g. `nodes`): what to cut from those objects as they arrive. */
  constructor(
    client: KubeClient,
    defaults: InformerOptions = {},
    transforms: Partial<Record<string, (object: unknown) => unknown>> = {},
  ) {
    this.#client = client;
    this.#defaults = defaults;
    this.#transforms = transforms;
  }

  /**
   * The shared informer of `type` (created on first use; started at once if the factory runs).
   * `selected` narrows it to the objects a label selector picks (one informer per selector), with
   * its own transform: for resources of which only a few concern the CCM (Secrets, say).
   */
  for<T>(
    type: ResourceType<T>,
    selected?: { labelSelector: string; transform?: (object: unknown) => unknown },
  ): Informer<T> {
    const key = `${type.apiVersion}/${type.plural}${selected ? `?${selected.labelSelector}` : ""}`;
    let informer = this.#informers.get(key) as Informer<T> | undefined;
    if (!informer) {
      const transform = selected ? selected.transform : this.#transforms[type.plural];
      const options = { ...this.#defaults, ...(selected ? { labelSelector: selected.labelSelector } : {}) };
      informer = new Informer(this.#client, type, transform ? { ...options, transform } : options);
      this.#informers.set(key, informer as Informer<unknown>);
      if (this.#signal) this.#runs.push(informer.run(this.#signal));
    }
    return informer;
  }

  /** Starts every informer until `signal` aborts. */
  start(signal: AbortSignal): void {
    this.#signal = signal;
    for (const informer of this.#informers.values()) this.#runs.push(informer.run(signal));
  }

  /** True when every informer has listed once. */
  hasSynced(): boolean {
    return [...this.#informers.values()].every((i) => i.hasSynced());
  }

  /** Waits until every informer has listed once. */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
  }

  /** Resolves when every informer has stopped (after the start signal aborted). */
  async stopped(): Promise<void> {
    await Promise.all(this.#runs);
  }
}
