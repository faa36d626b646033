/**
 * The waiting keys of a work queue, fair between writers (security review Q4: one namespace's burst of
 * 100 Service creates delayed another namespace's first sync by 199 s in one FIFO).
 *
 * @module
 */

/**
 * Waiting keys, handed out in turn between their writers: each writer's keys first in, first out, and
 * the writers in a ring (a writer whose key was just taken goes to the back).
 */
export class FairFifo {
  /** Each writer's waiting keys; the map's order is the ring's. */
  readonly #writers = new Map<string, string[]>();
  #length = 0;

  /** A queue whose keys' writers `writerOf` names. */
  constructor(readonly writerOf: (key: string) => string) {}

  /** How many keys wait. */
  get length(): number {
    return this.#length;
  }

  /** Adds `key` at the end of its writer's keys (a new writer joins the ring at its back). */
  push(key: string): void {
    const writer = this.writerOf(key);
    const keys = this.#writers.get(writer);
    if (keys) keys.push(key);
    else this.#writers.set(writer, [key]);
    this.#length++;
  }

  /** Takes the first key of the writer at the front of the ring, or undefined when none waits. */
  shift(): string | undefined {
    const next = this.#writers.entries().next();
    if (next.done) return undefined;
    const [writer, keys] = next.value;
    const key = keys.shift()!;
    this.#writers.delete(writer);
    if (keys.length) this.#writers.set(writer, keys); // to the back of the ring
    this.#length--;
    return key;
  }
}
