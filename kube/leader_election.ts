/**
 * Lease-based leader election with client-go's rules: a lease is free when its holder is empty or
 * it has not been renewed for `leaseDuration` as measured on *our* clock since we last saw it
 * change (so clock skew between instances does not matter); writes are conditional on the lease's
 * resourceVersion; a leader that cannot renew within `renewDeadline` steps down; on shutdown the
 * lease is released so a successor takes over at once.
 *
 * @module
 */
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import type { KubeClient } from "./client.ts";
import { KubeApiError } from "./errors.ts";
import { LEASES } from "./resources.ts";
import { type Clock, sleepOn, SYSTEM_CLOCK } from "../lib/clock.ts";
import type { Registry } from "../lib/metrics.ts";
import { logger } from "../lib/log.ts";
import { processRandom } from "../lib/random.ts";

/** Settings of a {@link LeaderElector}; the defaults are upstream's. */
export interface LeaderElectionOptions {
  namespace?: string;
  name?: string;
  /** Unique per process; default `<hostname>_<random>`. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  metrics?: Registry;
  /** Time (lease ages, renew deadlines, request timeouts, waits); default the system's. */
  clock?: Clock;
}

/** Called when leadership starts (with a signal that aborts when it ends) and when it ends. */
export interface LeaderCallbacks {
  onStartedLeading(leading: AbortSignal): void;
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
}

/** Competes for one Lease. */
export class LeaderElector {
  readonly identity: string;
  readonly namespace: string;
  readonly name: string;
  readonly #client: KubeClient;
  readonly #leaseMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryMs: number;
  readonly #clock: Clock;
  readonly #log = logger("leader-election");
  readonly #gauge;
  #observed?: { holder: string; renewTime: string; resourceVersion: string; at: number };
  #lease?: Lease;
  #leading = false;
  #leaderKnown = false;

  constructor(client: KubeClient, options: LeaderElectionOptions = {}) {
    this.#client = client;
    this.namespace = options.namespace ?? "kube-system";
    this.name = options.name ?? "cloud-controller-manager";
    this.identity = options.identity ?? `${hostname()}_${crypto.randomUUID()}`;
    this.#leaseMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryMs = options.retryPeriodMs ?? 2_000;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#gauge = options.metrics?.gauge(
      "leader_election_master_status",
      "1 while this instance leads the lease.",
    );
    this.#gauge?.set({ name: this.name }, 0);
  }

  /** True while this instance holds the lease. */
  isLeader(): boolean {
    return this.#leading;
  }

  /** True once the lease has been read or written successfully (readiness needs this). */
  get leaderKnown(): boolean {
    return this.#leaderKnown;
  }

  /**
   * Acquires the lease, leads until it is lost or `signal` aborts, then releases it (on abort).
   * Resolves `"stopped"` on abort and `"lost"` when renewal failed.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<"stopped" | "lost"> {
    while (!signal.aborted && !(await this.#tryAcquireOrRenew(callbacks))) {
      await sleepOn(this.#clock, this.#retryMs * (1 + 0.2 * processRandom()), signal).catch(() => {});
    }
    if (signal.aborted) return "stopped";
    this.#setLeading(true);
    this.#log.info("{identity} became leader of lease {ns}/{name}", {
      identity: this.identity,
      ns: this.namespace,
      name: this.name,
    });
    const leading = new AbortController();
    callbacks.onStartedLeading(leading.signal);
    let lastRenew = this.#clock.now();
    let outcome: "stopped" | "lost" = "stopped";
    while (!signal.aborted) {
      await sleepOn(this.#clock, this.#retryMs, signal).catch(() => {});
      if (signal.aborted) break;
      if (await this.#tryAcquireOrRenew(callbacks)) {
        lastRenew = this.#clock.now();
      } else if (this.#clock.now() - lastRenew > this.#renewDeadlineMs || !this.#stillMine()) {
        outcome = "lost";
        break;
      }
    }
    this.#setLeading(false);
    leading.abort(new Error(`leadership ${outcome}`));
    if (outcome === "lost") {
      this.#log.error("lost leadership of lease {ns}/{name}", { ns: this.namespace, name: this.name });
    }
    callbacks.onStoppedLeading?.();
    if (outcome === "stopped") await this.release();
    return outcome;
  }

  /** Gives the lease up if we hold it, so another instance can take over immediately. */
  async release(): Promise<void> {
    const lease = this.#lease;
    if (!lease || lease.spec?.holderIdentity !== this.identity) return;
    const timeout = this.#timeout(2_000);
    try {
      const now = microTime(this.#clock);
      this.#lease = await this.#client.update(LEASES, {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          renewTime: now,
          acquireTime: now,
        },
      }, { namespace: this.namespace, signal: timeout.signal });
      this.#log.info("released lease {ns}/{name}", { ns: this.namespace, name: this.name });
    } catch (err) {
      this.#log.warning("could not release lease: {error}", { error: (err as Error).message });
    } finally {
      timeout.clear();
    }
  }

  /** A signal that aborts after `ms` on the elector's clock (a hung request must not outlast it). */
  #timeout(ms: number): { signal: AbortSignal; clear: () => void } {
    const controller = new AbortController();
    const timer = this.#clock.setTimeout(
      () => controller.abort(new DOMException("the lease request timed out", "TimeoutError")),
      ms,
    );
    return { signal: controller.signal, clear: () => this.#clock.clearTimeout(timer) };
  }

  #stillMine(): boolean {
    return this.#lease?.spec?.holderIdentity === this.identity;
  }

  #setLeading(value: boolean): void {
    this.#leading = value;
    this.#gauge?.set({ name: this.name }, value ? 1 : 0);
  }

  async #tryAcquireOrRenew(callbacks: LeaderCallbacks): Promise<boolean> {
    const now = microTime(this.#clock);
    const timeout = this.#timeout(Math.max(1_000, this.#renewDeadlineMs / 2));
    const opts = { namespace: this.namespace, signal: timeout.signal };
    const desired = (previous?: Lease["spec"]): Lease["spec"] => ({
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.#leaseMs / 1000),
      acquireTime: previous?.holderIdentity === this.identity ? previous.acquireTime : now,
      renewTime: now,
      leaseTransitions: (previous?.leaseTransitions ?? 0) +
        (previous && previous.holderIdentity !== this.identity && previous.holderIdentity ? 1 : 0),
    });
    try {
      let lease: Lease;
      try {
        lease = await this.#client.get(LEASES, this.name, opts);
      } catch (err) {
        if (!(err instanceof KubeApiError && err.isNotFound)) throw err;
        this.#lease = await this.#client.create(LEASES, {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.name, namespace: this.namespace },
          spec: desired(),
        }, opts);
        this.#leaderKnown = true;
        callbacks.onNewLeader?.(this.identity);
        return true;
      }
      this.#leaderKnown = true;
      this.#lease = lease;
      const spec = lease.spec ?? {};
      const holder = spec.holderIdentity ?? "";
      const seen = this.#observed;
      if (!seen || seen.holder !== holder || seen.renewTime !== (spec.renewTime ?? "")) {
        this.#observed = {
          holder,
          renewTime: spec.renewTime ?? "",
          resourceVersion: lease.metadata?.resourceVersion ?? "",
          at: this.#clock.now(),
        };
        if (holder && holder !== seen?.holder) {
          callbacks.onNewLeader?.(holder);
          // A standby says so once per leader (the chart runs two replicas: half the logs are this).
          if (holder !== this.identity) {
            this.#log.info(
              "standing by: lease {ns}/{name} is held by {holder}; {identity} takes over when it is not renewed for {seconds} s",
              {
                ns: this.namespace,
                name: this.name,
                holder,
                identity: this.identity,
                seconds: spec.leaseDurationSeconds ?? 15,
              },
            );
          }
        }
      }
      const durationMs = (spec.leaseDurationSeconds ?? 15) * 1000;
      if (holder && holder !== this.identity && this.#observed!.at + durationMs > this.#clock.now()) {
        return false;
      }
      this.#lease = await this.#client.update(LEASES, { ...lease, spec: desired(spec) }, opts);
      return true;
    } catch (err) {
      const conflict = err instanceof KubeApiError && (err.isConflict || err.isAlreadyExists);
      if (!conflict) {
        this.#log.warning("lease {ns}/{name}: {error}", {
          ns: this.namespace,
          name: this.name,
          error: (err as Error).message,
        });
      }
      return false;
    } finally {
      timeout.clear();
    }
  }
}

/** RFC 3339 with microseconds, the format of `MicroTime` fields. */
function microTime(clock: Clock): string {
  return new Date(clock.now()).toISOString().replace(/Z$/, "000Z");
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "deno-ccm";
  }
}
