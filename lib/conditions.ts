/**
 * Named problems that controllers report for `/readyz` (e.g. "node deletions held"): each name is
 * fine (absent) or carries a message.
 *
 * @module
 */

/** See the module doc. */
export class Conditions {
  readonly #problems = new Map<string, string>();

  /** Sets (`message`) or clears (`undefined`) the problem `name`. */
  set(name: string, message: string | undefined): void {
    if (message === undefined) this.#problems.delete(name);
    else this.#problems.set(name, message);
  }

  /** Every current problem as `name: message`, joined; undefined when there is none. */
  problem(): string | undefined {
    if (this.#problems.size === 0) return undefined;
    return [...this.#problems].map(([name, message]) => `${name}: ${message}`).join("; ");
  }
}
