/**
 * Where the provider's warnings go: on the Service, or on the Node a warning names (where the official
 * CCM puts them). A Node's problem is the same for every balancer: it is said once per quiet period,
 * not once per balancer sync (security probe N17: six identical Warnings within a second).
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { NODES, SERVICES } from "../../kube/resources.ts";
import type { ProviderWarning } from "../../providers/provider.ts";

/** How long one Node warning (Node, reason, message) stays said. */
export const NODE_WARNING_QUIET_MS = 10 * 60_000;

/** See the module doc. */
export class ServiceWarnings {
  readonly #recorder: EventRecorder;
  readonly #node: (name: string) => Node | undefined;
  /** Node Warnings from balancer syncs, by Node, reason and message: when each was last said. */
  readonly #nodeWarned = new Map<string, number>();

  readonly #now: () => number;

  /** `node`: the Node of that name, from the informer; `now`: the controller's clock. */
  constructor(
    recorder: EventRecorder,
    node: (name: string) => Node | undefined,
    now: () => number = Date.now,
  ) {
    this.#recorder = recorder;
    this.#node = node;
    this.#now = now;
  }

  /** Records `warnings` of a sync of `svc`. */
  say(svc: Service, warnings: ProviderWarning[] | undefined): void {
    for (const w of warnings ?? []) {
      const node = w.node ? this.#node(w.node) : undefined;
      if (!node) {
        this.#recorder.event(SERVICES, svc, "Warning", w.reason, w.message);
        continue;
      }
      const key = `${node.metadata?.uid}|${w.reason}|${w.message}`;
      const now = this.#now();
      if (now - (this.#nodeWarned.get(key) ?? -Infinity) < NODE_WARNING_QUIET_MS) continue;
      if (this.#nodeWarned.size > 10_000) this.#nodeWarned.clear();
      this.#nodeWarned.set(key, now);
      this.#recorder.event(NODES, node, "Warning", w.reason, w.message);
    }
  }
}
