/**
 * Whether the loops that serve the whole cluster still run (security review item 3: one tenant's
 * string stopped the firewall keeper, drift repair and the orphan sweep, and nothing said so beyond
 * a log line per retry). Each loop's consecutive failures are a gauge from the first; after
 * {@link FAILING_AFTER} in a row the loop is a `/readyz` problem naming the last error, cleared by its
 * next success.
 *
 * @module
 */
import type { Registry } from "./metrics.ts";
import type { Conditions } from "./conditions.ts";

/** Consecutive failures after which a loop is a `/readyz` problem (one failure is often a blip). */
export const FAILING_AFTER = 3;

/** See the module doc. */
export class LoopHealth {
  readonly #failures = new Map<string, number>();
  readonly #gauge;

  /** Reports to `registry` (the gauge) and `conditions` (`/readyz`). */
  constructor(registry: Registry, readonly conditions?: Conditions) {
    this.#gauge = registry.gauge(
      "loop_consecutive_failures",
      "Consecutive failed runs of each loop that serves the whole cluster (firewall, drift-repair, " +
        "orphan-sweep, lost-balancer-check, node-sync, route-sync); 0 after a success.",
    );
  }

  /** `loop` ran to its end. */
  ok(loop: string): void {
    this.#failures.set(loop, 0);
    this.#gauge.set({ loop }, 0);
    this.conditions?.set(loop, undefined);
  }

  /** `loop` failed with `message` (never a secret: the callers' errors are redacted cloud answers). */
  failed(loop: string, message: string): void {
    const n = (this.#failures.get(loop) ?? 0) + 1;
    this.#failures.set(loop, n);
    this.#gauge.set({ loop }, n);
    if (n >= FAILING_AFTER) this.conditions?.set(loop, `failed ${n} times in a row, last: ${message}`);
  }
}
