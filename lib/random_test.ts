import { assert, assertEquals } from "../testing/assert.ts";
import { pick, processRandom, seededRandom, seedProcessRandom } from "./random.ts";
import { backoffDelay } from "./sleep.ts";

Deno.test("seeded random: one seed replays its sequence; another seed gives another; values stay in [0, 1)", () => {
  const take = (seed: number) => {
    const r = seededRandom(seed);
    return Array.from({ length: 1000 }, () => r());
  };
  assertEquals(take(42), take(42));
  assert(take(42).some((x, i) => x !== take(43)[i]), "another seed, another sequence");
  assert(take(7).every((x) => x >= 0 && x < 1));
  // Every bucket of a die gets a share (a constant or stuck generator would not).
  const r = seededRandom(1);
  const counts = [0, 0, 0, 0, 0, 0];
  for (let i = 0; i < 6000; i++) counts[pick(r, 6)]++;
  assert(counts.every((c) => c > 800 && c < 1200), `counts ${counts}`);
});

Deno.test("process random: one seed replays what the product spreads at random (retry jitter, event names)", () => {
  const draw = () => {
    seedProcessRandom(1234);
    return [
      backoffDelay(3, { baseMs: 1_000, maxMs: 30_000, jitter: 0.5 }),
      backoffDelay(4, { baseMs: 1_000, maxMs: 30_000, jitter: 0.5 }),
      processRandom(),
    ];
  };
  const first = draw();
  assertEquals(draw(), first);
  seedProcessRandom(1235);
  assert(processRandom() !== first[2], "another seed, another draw");
});
