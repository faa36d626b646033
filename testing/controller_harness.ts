/**
 * Runs one controller against the {@link MemoryApiserver} and a provider (usually `FakeProvider`):
 * upstream's `newController() → (controller, fakeCloud, fakeClient)` for table tests that need no
 * real apiserver and finish in well under a second.
 *
 * The controller runs on a {@link FakeClock}: `runFor(ms)` and `run(scenario)` move its time only
 * when told (`advance`), so a 10-minute drain period costs no real time, and `settle()` waits for
 * what the controller does without time moving. `runWhile(scenario)` lets the clock follow real
 * time, for scenarios written with `eventually`.
 *
 * @module
 */
import { KubeClient } from "../kube/client.ts";
import { InformerFactory } from "../kube/informer_factory.ts";
import { type Flags, parseFlags } from "../config/flags.ts";
import { Registry } from "../lib/metrics.ts";
import { Conditions } from "../lib/conditions.ts";
import {
  type Controller,
  type ControllerContext,
  type ControllerFactory,
  INFORMER_TRANSFORMS,
  makeRecorderFactory,
} from "../controllers/mod.ts";
import type { CloudProvider } from "../providers/provider.ts";
import { MemoryApiserver } from "./memory_apiserver.ts";
import { FakeClock } from "./fake_clock.ts";

/** A controller wired to an in-memory apiserver and `provider`. */
export interface ControllerUnderTest {
  controller: Controller;
  apiserver: MemoryApiserver;
  client: KubeClient;
  /** The metrics the controller registered. */
  metrics: Registry;
  /** What the controller reports for `/readyz`. */
  conditions: Conditions;
  /** The controller's clock. */
  clock: FakeClock;
  /** Runs informers and the controller for `ms` of the fake clock (no real wait), then stops both. */
  runFor(ms: number): Promise<void>;
  /**
   * Runs informers and the controller while `scenario` runs on the fake clock: time moves only
   * through {@link ControllerUnderTest.advance}; then stops both.
   */
  run<T>(scenario: () => Promise<T>): Promise<T>;
  /**
   * Runs informers and the controller while `scenario` runs (it may change objects through
   * `client` and wait for what follows with `eventually`), the clock following real time; then
   * stops both.
   */
  runWhile<T>(scenario: () => Promise<T>): Promise<T>;
  /** Waits until the controller has done what it can without time moving. */
  settle(): Promise<void>;
  /** Moves the clock by `ms`, firing periods and delays as they fall, each one's work settled. */
  advance(ms: number): Promise<void>;
  /** Queues `key` on the controller's queue `queue` at once and waits for the work to settle. */
  sync(queue: string, key: string): Promise<void>;
}

/**
 * Builds the controller from `factory` with `args` as command-line flags. Seed objects into the
 * returned `apiserver` before `runFor`.
 */
export function newController(
  factory: ControllerFactory,
  provider: CloudProvider,
  args: string[] = [],
  options: { clockStart?: number } = {},
): ControllerUnderTest & { apiserver: MemoryApiserver } {
  const { flags, errors } = parseFlags(["--leader-elect=false", ...args]);
  if (errors.length) throw new Error(errors.join("; "));
  const apiserver = new MemoryApiserver();
  const client = new KubeClient(apiserver);
  const metrics = new Registry();
  const conditions = new Conditions();
  const informers = new InformerFactory(client, {}, INFORMER_TRANSFORMS);
  // A fixed start (a replay) makes every timestamp and event name of a run the same.
  const clock = new FakeClock(options.clockStart);
  const ctx: ControllerContext = {
    client,
    informers,
    provider,
    flags: flags as Flags,
    metrics,
    recorder: makeRecorderFactory(client, "test-host", () => clock.now()).recorder,
    conditions,
    clock,
  };
  const made = factory(ctx);
  if ("disabled" in made) throw new Error(`controller disabled: ${made.disabled}`);
  /** Starts informers and the controller; the returned function stops both. */
  const start = async (): Promise<() => Promise<void>> => {
    const stop = new AbortController();
    informers.start(stop.signal);
    await informers.waitForSync(stop.signal);
    const run = made.run(stop.signal);
    return async () => {
      stop.abort();
      await run.catch(() => {});
      apiserver.close();
      await informers.stopped();
    };
  };
  return {
    controller: made,
    apiserver,
    client,
    metrics,
    conditions,
    clock,
    runFor(ms: number) {
      return this.run(() => clock.advance(ms));
    },
    async run<T>(scenario: () => Promise<T>): Promise<T> {
      const stop = await start();
      try {
        await clock.settle();
        return await scenario();
      } finally {
        await stop();
      }
    },
    async runWhile<T>(scenario: () => Promise<T>): Promise<T> {
      const stop = await start();
      const unfollow = clock.followRealTime();
      try {
        return await scenario();
      } finally {
        unfollow();
        await stop();
      }
    },
    settle: () => clock.settle(),
    advance: (ms) => clock.advance(ms),
    async sync(queue: string, key: string) {
      clock.queue(queue).add(key);
      await clock.settle();
    },
  };
}
