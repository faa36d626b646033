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

/** A seed for a run: the `SEED` environment variable when set (to replay one), else a fresh one. */
export function runSeed(): number {
  const given = Deno.env.get("SEED");
  if (given !== undefined && /^\d+$/.test(given)) return Number(given) >>> 0;
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

/** An integer in [0, n) from `random`. */
export function pick(random: Random, n: number): number {
  return Math.floor(random() * n);
}
