/**
 * Starts the enabled controllers on shared informers and runs them until the signal aborts.
 *
 * @module
 */
import type { KubeClient } from "../kube/client.ts";
import { EventRecorder } from "../kube/events.ts";
import type { InformerFactory } from "../kube/informer_factory.ts";
import type { Registry } from "../lib/metrics.ts";
import { logger } from "../lib/log.ts";
import type { Flags } from "../config/flags.ts";
import type { ControllerName } from "../config/controllers_flag.ts";
import type { CloudProvider } from "../providers/provider.ts";
import type { Conditions } from "../lib/conditions.ts";
import type { Clock } from "../lib/clock.ts";

/**
 * What every controller gets; `F`: the flags it reads (a controller declares them as a `Pick` of
 * {@link Flags}, so what it depends on of the command line is in its signature).
 */
export interface ControllerContext<F = Flags> {
  /** The apiserver client every controller writes through. */
  client: KubeClient;
  /** Shared informers: one watch per resource, whoever reads it. */
  informers: InformerFactory;
  /** The cloud, through the provider contract. */
  provider: CloudProvider;
  /** The command-line flags the controller reads (a `Pick` of {@link Flags}). */
  flags: F;
  /** Where the controller registers its metrics. */
  metrics: Registry;
  /** An event recorder for one component name (e.g. `cloud-node-controller`). */
  recorder(component: string): EventRecorder;
  /** Problems shown by `/readyz` (absent in contexts that serve none). */
  conditions?: Conditions;
  /** Periods, delays and the ages they compare run on it (the system clock; a fake one in tests). */
  clock: Clock;
}

/**
 * A controller off for want of a provider part, saying why in the provider's words when it can
 * (`CloudProvider.absent`): "provider mycloud offers no routes (MYCLOUD_NETWORK is not set)".
 */
export function partMissing(
  provider: CloudProvider,
  part: "instances" | "loadBalancers" | "routes",
  says: string,
): { disabled: string } {
  const why = provider.absent?.[part];
  return { disabled: `provider ${provider.name} ${says}${why ? ` (${why})` : ""}` };
}

/** A running controller. Construction registers its informer handlers; `run` does the work. */
export interface Controller {
  /** The controller's name, as `--controllers` spells it. */
  readonly name: string;
  /** Works until `signal` aborts, then resolves once every started sync has ended. */
  run(signal: AbortSignal): Promise<void>;
}

/** Builds a controller, or says why it cannot run with this provider/configuration. */
export type ControllerFactory = (ctx: ControllerContext) => Controller | { disabled: string };

/** Builds the context's event recorders, all flushed by {@link flushRecorders}. */
export function makeRecorderFactory(client: KubeClient, host: string, now: () => number = Date.now): {
  recorder: (component: string) => EventRecorder;
  flushRecorders: () => Promise<void>;
} {
  const made = new Map<string, EventRecorder>();
  return {
    recorder: (component) => {
      let r = made.get(component);
      if (!r) made.set(component, r = new EventRecorder(client, component, host, now));
      return r;
    },
    flushRecorders: async () => {
      await Promise.all([...made.values()].map((r) => r.flush()));
    },
  };
}

/**
 * Creates the enabled controllers, starts the informers, calls `onSynced` once every cache is
 * filled, and runs the controllers until `signal` aborts.
 */
export async function runControllers(
  ctx: ControllerContext,
  enabled: Set<ControllerName>,
  factories: Partial<Record<ControllerName, ControllerFactory>>,
  signal: AbortSignal,
  onSynced: () => void,
): Promise<void> {
  const log = logger("controller-manager");
  const controllers: Controller[] = [];
  for (const name of enabled) {
    const factory = factories[name];
    if (!factory) {
      log.warning("{name} is not available in this build; skipping it", { name });
      continue;
    }
    const made = factory(ctx);
    if ("disabled" in made) log.info("{name} is off: {reason}", { name, reason: made.disabled });
    else controllers.push(made);
  }
  ctx.informers.start(signal);
  try {
    await ctx.informers.waitForSync(signal);
  } catch {
    return; // stopped before the caches filled
  }
  log.info("caches synced; starting {controllers}", {
    controllers: controllers.map((c) => c.name).join(", ") || "nothing",
  });
  onSynced();
  await Promise.all(
    controllers.map((c) =>
      c.run(signal).catch((err) =>
        log.error("{name} stopped with an error: {error}", { name: c.name, error: (err as Error).message })
      )
    ),
  );
  await ctx.informers.stopped();
}
