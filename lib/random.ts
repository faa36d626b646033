/**
 * Randomness from a seed: the same seed gives the same sequence, so a run that chose at random
 * replays (developers' guide, rule 5). Product code takes a `() => number` in [0, 1) from its caller;
 * tests and explorations make one here and print the seed.
 *
 * @module
 */

/** A source of numbers in [0, 1), as `Math.random`. */
export type Random = () => number;

/**
 * A generator from a 32-bit seed (SplitMix32: small, fast, and its sequences for nearby seeds are
 * unrelated). Not for secrets.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 0x1_0000_0000;
  };
}

/** A fresh seed (not for secrets: a seed is printed so a run can be replayed). */
export function freshSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

/**
 * A seed for a test run: the `SEED` environment variable when set (to replay one), else a fresh one.
 * (The compiled binary may not read `SEED`: it always takes a fresh one.)
 */
export function runSeed(): number {
  let given: string | undefined;
  try {
    given = Deno.env.get("SEED");
  } catch {
    given = undefined;
  }
  if (given !== undefined && /^\d+$/.test(given)) return Number(given) >>> 0;
  return freshSeed();
}

let processSource: Random = seededRandom(freshSeed());

/**
 * The process's source of randomness for what it only spreads out (retry jitter, watch timeouts,
 * event name suffixes): every product component takes it as its default, so one call of
 * {@link seedProcessRandom} makes a run's random choices replay. Never for secrets or identities.
 */
export const processRandom: Random = () => processSource();

/** Seeds {@link processRandom} (a test, or a replay). */
export function seedProcessRandom(seed: number): void {
  processSource = seededRandom(seed);
}

/** An integer in [0, n) from `random`. */
export function pick(random: Random, n: number): number {
  return Math.floor(random() * n);
}
