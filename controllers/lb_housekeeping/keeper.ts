/**
 * The service controller's housekeeping of this cluster's load balancers as a whole, with its own
 * timers and queue, through the provider's inventory capability: sweeping balancers whose Service is gone (created by a request in flight during a crash), finding
 * balancers deleted outside the CCM, and repairing balancers changed outside it (drift). Each job is
 * one paginated list at most; one worker runs them one at a time, retried with backoff.
 *
 * Many balancers missing at once are not believed (security probe N3: a token of another project,
 * an API answering empty): when more than half of the synced Services' balancers (and more than one)
 * vanish together, none is recreated; each Service gets one `LoadBalancersMissingHeld` Warning,
 * `/readyz` says why, and a metric counts them. The hold ends when the cloud shows them again, or for
 * one Service when it is annotated `service.deno-ccm.io/confirm-recreate: "true"` (its own balancer only).
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { ControllerContext } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";

/** The flags the housekeeping reads. */
export type HousekeepingFlags = Pick<Flags, "nodeStatusUpdateFrequency" | "driftRepairPeriod">;
import type { LoadBalancerInventory } from "../../providers/provider.ts";
import { SERVICES } from "../../kube/resources.ts";
import { objectKey } from "../../kube/informer.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { CONFIRM_RECREATE } from "../../kube/well_known.ts";
import { LoopHealth } from "../../lib/loop_health.ts";

/** The jobs, each a key of the housekeeping queue. */
type Job = "orphan-sweep" | "verify" | "drift-repair";
/** Each job's name as a loop of the whole cluster (`/readyz`, `loop_consecutive_failures`). */
const LOOP_NAMES: Record<Job, string> = {
  "orphan-sweep": "orphan-sweep",
  "verify": "lost-balancer-check",
  "drift-repair": "drift-repair",
};

// Leaks come from a create in flight during a crash: the sweep 75 s after start and after every
// cleanup finds them; the hourly one is a backstop.
const ORPHAN_SWEEP_DELAY_MS = 75_000;
const ORPHAN_SWEEP_PERIOD_MS = 3_600_000;

/** What housekeeping needs of the service controller. */
export interface HousekeepingHooks {
  /** The Services that want a balancer now. */
  wanted(): Service[];
  /** The wanted Services whose last sync succeeded (not being deleted). */
  synced(): Service[];
  /** The name of the Service's balancer: Services that share one count as one balancer when many vanish. */
  balancerOf?(service: Service): string;
  /** Syncs the Service again; `recreate`: its balancer is gone, so forget what it was synced with. */
  resync(service: Service, recreate: boolean): void;
  /** Balancers were deleted outside any Service's sync (the orphan sweep): what follows them looks again. */
  deleted?(): void;
}

/** See the module doc. */
export class LoadBalancerHousekeeping {
  readonly #ctx: ControllerContext<HousekeepingFlags>;
  readonly #inventory?: LoadBalancerInventory;
  readonly #hooks: HousekeepingHooks;
  readonly #recorder: EventRecorder;
  readonly #queue: WorkQueue;
  readonly #log = logger("service");
  /** Services told that every target of their balancer fails its health check (until one passes). */
  readonly #toldUnhealthy = new Set<string>();
  readonly #orphansDeleted;
  /** When the last drift check answered (it answers the verify's question too). */
  #driftCheckedAt = 0;
  readonly #heldGauge;
  /** The Services (UIDs) whose recreation is held, as last reported. */
  #heldKey = "";

  /** `inventory`: the provider's capability; without it only the hooks' bookkeeping runs (none). */
  constructor(
    ctx: ControllerContext<HousekeepingFlags>,
    inventory: LoadBalancerInventory | undefined,
    recorder: EventRecorder,
    hooks: HousekeepingHooks,
  ) {
    this.#ctx = ctx;
    this.#inventory = inventory;
    this.#hooks = hooks;
    this.#recorder = recorder;
    this.#queue = new WorkQueue("service-housekeeping", {
      clock: ctx.clock,
      baseDelayMs: 1_000,
      maxDelayMs: 60_000,
      metrics: ctx.metrics,
    });
    this.#heldGauge = ctx.metrics.gauge(
      "service_missing_balancers_held",
      "Services whose balancer is missing but not recreated, because too many vanished at once.",
    );
    this.#heldGauge.set({}, 0);
    this.#orphansDeleted = ctx.metrics.counter(
      "service_orphan_load_balancers_deleted_total",
      "Load balancers of this cluster deleted because their Service no longer exists.",
    );
  }

  /**
   * Runs the jobs on their periods until `signal` aborts: the orphan sweep 75 s after start, then
   * drift repair every `--drift-repair-period`, whose one list also finds missing balancers and
   * orphans (swept when it shows one). With drift repair off: the sweep hourly and the
   * missing-balancer check every `--node-status-update-frequency`. Nothing without the inventory.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted || !this.#inventory) return;
    const driftPeriod = this.#ctx.flags.driftRepairPeriod;
    // The drift pass's list also shows missing balancers and orphans: with it, neither needs its own.
    const timers = driftPeriod > 0
      ? [this.#ctx.clock.setInterval(() => this.#queue.add("drift-repair" satisfies Job), driftPeriod)]
      : [
        this.#ctx.clock.setInterval(
          () => this.#queue.add("orphan-sweep" satisfies Job),
          ORPHAN_SWEEP_PERIOD_MS,
        ),
        this.#ctx.clock.setInterval(
          () => this.#queue.add("verify" satisfies Job),
          this.#ctx.flags.nodeStatusUpdateFrequency,
        ),
      ];
    this.sweepSoon();
    signal.addEventListener("abort", () => {
      timers.forEach((t) => this.#ctx.clock.clearInterval(t));
      this.#queue.shutDown();
    }, { once: true });
    const jobs: Record<Job, (signal: AbortSignal) => Promise<void>> = {
      "orphan-sweep": (signal: AbortSignal) => this.#sweep(signal),
      "verify": (signal: AbortSignal) => this.#verify(signal),
      "drift-repair": (signal: AbortSignal) => this.#repairDrift(signal),
    };
    await runWorkers(
      this.#queue,
      (key, cancel) => withPriority("loadbalancer", () => jobs[key as Job](cancel)),
      {
        policy: reconcilePolicy,
        signal,
        loop: {
          health: new LoopHealth(this.#ctx.metrics, this.#ctx.conditions),
          name: (key) => LOOP_NAMES[key as Job],
        },
      },
    );
  }

  /**
   * Looks at every balancer now, with one list (drift repair; without it, the missing-balancer
   * check): after a change of credentials, what the cloud shows may differ from what was synced.
   */
  checkNow(): void {
    if (!this.#inventory) return;
    const job: Job = this.#ctx.flags.driftRepairPeriod > 0 ? "drift-repair" : "verify";
    this.#queue.add(job);
  }

  /** Sweeps for orphans a little later (a create still in flight from before a crash may land). */
  sweepSoon(): void {
    if (!this.#inventory) return;
    this.#queue.addAfter("orphan-sweep" satisfies Job, ORPHAN_SWEEP_DELAY_MS);
  }

  /** Deletes this cluster's balancers whose Service no longer wants one. */
  async #sweep(signal: AbortSignal): Promise<void> {
    if (!this.#inventory) return;
    const live = new Set(this.#hooks.wanted().map((s) => s.metadata!.uid!));
    const deleted = await this.#inventory.sweepOrphans(live, signal);
    if (deleted) {
      this.#hooks.deleted?.();
      this.#orphansDeleted.inc({}, deleted);
      this.#log.warning("deleted {n} orphaned load balancer(s) whose Service no longer exists", {
        n: deleted,
      });
    }
  }

  /** Recreates the balancers deleted outside the CCM (skipped right after a drift check answered it). */
  async #verify(signal: AbortSignal): Promise<void> {
    if (this.#ctx.clock.now() - this.#driftCheckedAt < this.#ctx.flags.nodeStatusUpdateFrequency) return;
    const synced = this.#hooks.synced();
    if (synced.length === 0) return;
    const owners = await this.#inventory?.owners(synced.length, signal);
    if (owners) this.#recreate(synced.filter((svc) => !owners.has(svc.metadata!.uid!)), synced);
  }

  /** Syncs again every Service whose balancer was changed outside the CCM; recreates missing ones. */
  async #repairDrift(signal: AbortSignal): Promise<void> {
    const report = await this.#inventory?.drift(signal);
    if (!report) return;
    this.#driftCheckedAt = this.#ctx.clock.now();
    // A balancer whose Service no longer wants one: the sweep (with its own checks) takes it.
    const wanted = new Set(this.#hooks.wanted().map((s) => s.metadata!.uid!));
    if ([...report.owners].some((uid) => !wanted.has(uid))) await this.#sweep(signal);
    const synced = this.#hooks.synced();
    this.#recreate(synced.filter((svc) => !report.owners.has(svc.metadata!.uid!)), synced);
    for (const service of synced) {
      const differences = report.drifted.get(service.metadata!.uid!);
      if (!differences) continue;
      const what = differences.join(", ");
      this.#log.warning("the load balancer of {service} was changed outside the CCM ({what}); reverting", {
        service: objectKey(service),
        what,
      });
      this.#recorder.event(
        SERVICES,
        service,
        "Warning",
        "LoadBalancerDrifted",
        `The load balancer was changed outside the CCM (${what}); reverting`,
      );
      this.#hooks.resync(service, false);
    }
    this.#reportUnhealthy(synced, report.unhealthy ?? new Map());
  }

  /** Says once on the Service, each time it starts, that no target of its balancer is healthy. */
  #reportUnhealthy(synced: Service[], unhealthy: Map<string, string>): void {
    for (const uid of this.#toldUnhealthy) if (!unhealthy.has(uid)) this.#toldUnhealthy.delete(uid);
    for (const service of synced) {
      const uid = service.metadata!.uid!;
      const why = unhealthy.get(uid);
      if (!why || this.#toldUnhealthy.has(uid)) continue;
      this.#toldUnhealthy.add(uid);
      this.#log.warning("no target of the load balancer of {service} is healthy: {why}", {
        service: objectKey(service),
        why,
      });
      this.#recorder.event(
        SERVICES,
        service,
        "Warning",
        "LoadBalancerTargetsUnhealthy",
        `The load balancer sends no traffic: ${why}`,
      );
    }
  }

  #recreate(missing: Service[], synced: Service[]): void {
    // Counted in balancers: the Services of one shared balancer that vanished are one loss, not many.
    const balancer = (s: Service) => this.#hooks.balancerOf?.(s) ?? s.metadata!.uid!;
    const lost = new Set(missing.map(balancer)).size;
    const many = lost > 1 && lost * 2 > new Set(synced.map(balancer)).size;
    const held = many ? missing.filter((s) => s.metadata?.annotations?.[CONFIRM_RECREATE] !== "true") : [];
    this.#reportHeld(held, missing.length, synced.length);
    for (const service of missing) {
      if (held.includes(service)) continue;
      this.#log.warning("the load balancer of {service} is gone; recreating it", {
        service: objectKey(service),
      });
      this.#recorder.event(
        SERVICES,
        service,
        "Warning",
        "LoadBalancerMissing",
        "The load balancer is gone; recreating it",
      );
      this.#hooks.resync(service, true);
    }
  }

  /** Reports a change of the held set: an event per Service, a log line, the metric and `/readyz`. */
  #reportHeld(held: Service[], missing: number, synced: number): void {
    this.#heldGauge.set({}, held.length);
    const key = held.map((s) => s.metadata?.uid).sort().join(",");
    if (key === this.#heldKey) return;
    this.#heldKey = key;
    if (held.length === 0) {
      this.#ctx.conditions?.set("balancer-recreation", undefined);
      return;
    }
    const why = `the balancers of ${missing} of ${synced} Services vanished at once: a wrong token or ` +
      "project, or an API incident?";
    this.#ctx.conditions?.set("balancer-recreation", `${held.length} balancer recreation(s) held: ${why}`);
    this.#log.warning("holding {n} balancer recreation(s): {why}", { n: held.length, why });
    for (const service of held) {
      this.#recorder.event(
        SERVICES,
        service,
        "Warning",
        "LoadBalancersMissingHeld",
        `Not recreating the load balancer: ${why} Annotate the Service ${CONFIRM_RECREATE}="true" to recreate it anyway`,
      );
    }
  }
}

export { CONFIRM_RECREATE };
