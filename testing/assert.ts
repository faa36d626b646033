/**
 * Test assertions on `node:assert/strict` (JSR's @std/assert is unreachable here), with the
 * signatures our tests use.
 *
 * @module
 */
import nodeAssert from "node:assert/strict";

/** Fails unless `condition` is truthy. */
export function assert(condition: unknown, message?: string): asserts condition {
  nodeAssert.ok(condition, message);
}

/** Deep, strict equality. */
export function assertEquals<T>(actual: unknown, expected: T, message?: string): asserts actual is T {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/** Fails unless `text` matches `pattern`. */
export function assertMatch(text: string, pattern: RegExp, message?: string): void {
  nodeAssert.match(text, pattern, message);
}

/** Awaits `fn`, expects it to reject with an instance of `type`, and returns that error. */
export async function assertRejects<E extends Error>(
  fn: () => Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw new Error(
      `expected a ${type.name}, got ${err instanceof Error ? `${err.name}: ${err.message}` : err}`,
    );
  }
  throw new Error(`expected a ${type.name}, but it resolved`);
}

/** Expects `fn` to throw an instance of `type` and returns it. */
export function assertThrows<E extends Error>(fn: () => unknown, type: new (...args: never[]) => E): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw new Error(
      `expected a ${type.name}, got ${err instanceof Error ? `${err.name}: ${err.message}` : err}`,
    );
  }
  throw new Error(`expected a ${type.name}, but nothing was thrown`);
}
