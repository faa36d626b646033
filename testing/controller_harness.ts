/**
 * Runs one controller against the {@link MemoryApiserver} and a provider (usually `FakeProvider`):
 * upstream's `newController() → (controller, fakeCloud, fakeClient)` for table tests that need no
 * real apiserver and finish in well under a second.
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

/** A controller wired to an in-memory apiserver and `provider`. */
export interface ControllerUnderTest {
  controller: Controller;
  apiserver: MemoryApiserver;
  client: KubeClient;
  /** The metrics the controller registered. */
  metrics: Registry;
  /** What the controller reports for `/readyz`. */
  conditions: Conditions;
  /** Runs informers and the controller for `ms`, then stops both. */
  runFor(ms: number): Promise<void>;
  /**
   * Runs informers and the controller while `scenario` runs (it may change objects through
   * `client` and wait for what follows with `eventually`), then stops both.
   */
  runWhile<T>(scenario: () => Promise<T>): Promise<T>;
}

/**
 * Builds the controller from `factory` with `args` as command-line flags. Seed objects into the
 * returned `apiserver` before `runFor`.
 */
export function newController(
  factory: ControllerFactory,
  provider: CloudProvider,
  args: string[] = [],
): ControllerUnderTest & { apiserver: MemoryApiserver } {
  const { flags, errors } = parseFlags(["--leader-elect=false", ...args]);
  if (errors.length) throw new Error(errors.join("; "));
  const apiserver = new MemoryApiserver();
  const client = new KubeClient(apiserver);
  const metrics = new Registry();
  const conditions = new Conditions();
  const informers = new InformerFactory(client, {}, INFORMER_TRANSFORMS);
  const ctx: ControllerContext = {
    client,
    informers,
    provider,
    flags: flags as Flags,
    metrics,
    recorder: makeRecorderFactory(client, "test-host").recorder,
    conditions,
  };
  const made = factory(ctx);
  if ("disabled" in made) throw new Error(`controller disabled: ${made.disabled}`);
  return {
    controller: made,
    apiserver,
    client,
    metrics,
    conditions,
    runFor(ms: number) {
      return this.runWhile(() => new Promise((r) => setTimeout(r, ms)));
    },
    async runWhile<T>(scenario: () => Promise<T>): Promise<T> {
      const stop = new AbortController();
      informers.start(stop.signal);
      await informers.waitForSync(stop.signal);
      const run = made.run(stop.signal);
      try {
        return await scenario();
      } finally {
        stop.abort();
        await run.catch(() => {});
        apiserver.close();
        await informers.stopped();
      }
    },
  };
}
