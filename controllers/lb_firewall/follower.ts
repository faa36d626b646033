/**
 * The firewall follows the balancers (the provider's `loadBalancers.firewall`): a sync after a
 * LoadBalancer Service's balancer may have changed — it got or lost its address, its ports or
 * annotations changed, it was deleted — {@link BURST} at once, then one per
 * {@link MIN_INTERVAL_MS}; and to put back rules changed outside the CCM: when the provider's
 * `watch` sees a sign of it, or (a provider without `watch`) once per drift repair period. One key,
 * one run at a time; a failed run is retried with backoff (a refusal that cannot fit is logged with
 * the numbers and retried slowly).
 *
 * Services of other types the provider says concern the firewall (`concerns`: a NodePort Service
 * opening its ports) ask for a sync too, without the balancers being looked at again; the provider's
 * refusals become a Warning event on the Service (`FirewallNodePortsRefused`), once per message.
 *
 * Cost: with a provider that watches (hcloud), 0 calls while nothing changes; a poke, like the
 * periodic check of a provider that does not watch, says no Service changed (hcloud then reads only
 * the firewall). A change costs a list of the balancers, a read and one write when rules differ. A
 * tenant changing Services without pause makes it run once a minute after the burst: about 180
 * requests an hour.
 *
 * @module
 */
import type { Clock } from "../../lib/clock.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { ControllerContext } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import type { LoadBalancerFirewall } from "../../providers/provider.ts";
import { SERVICES } from "../../kube/resources.ts";
import { objectKey } from "../../kube/informer.ts";
import { LB_FINALIZER } from "../../kube/well_known.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { withPriority } from "../../lib/priority.ts";
import { logger } from "../../lib/log.ts";
import { refilled } from "../../lib/token_bucket.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { LoopHealth } from "../../lib/loop_health.ts";

/** Once the burst is spent, the fewest milliseconds between two syncs started by Service changes. */
export const MIN_INTERVAL_MS = 60_000;
/**
 * Syncs that may run back to back before the interval holds: a new Service's balancer is opened as
 * soon as it has its address (the sync at start, the Services listed, a first balancer), while a
 * tenant churning Services still gets one sync a minute.
 */
export const BURST = 3;
const KEY = "firewall";

/** See the module doc. */
export class FirewallFollower {
  readonly #firewall: LoadBalancerFirewall;
  readonly #queue: WorkQueue;
  readonly #periodMs: number;
  readonly #minIntervalMs: number;
  readonly #log = logger("firewall");
  readonly #rules;
  readonly #writes;
  /** Syncs the burst has left (see {@link BURST}), as of {@link #tokensAt}. */
  #tokens = BURST;
  #tokensAt: number;
  /** A poke's sync is queued and has not started. */
  #asked = false;
  /** LoadBalancer Services changed whose balancer the service controller has not ensured since. */
  readonly #awaited = new Set<string>();
  /** A Service changed since the last successful sync (the balancers must be looked at again). */
  #dirty = true;
  readonly #clock: Clock;
  readonly #recorder: EventRecorder;
  readonly #services: (key: string) => Service | undefined;
  /** Refusals said, by Service UID: the message last recorded (said again only when it changes). */
  readonly #told = new Map<string, string>();
  /** The provider's last notice about the firewall (logged once per change). */
  #notice?: string;
  /** The balancers the firewall had no room for, as last said. */
  #leftOut = "";
  readonly #leftOutGauge;
  readonly #loops: LoopHealth;

  /** Follows the Services of `ctx`'s informer; refusals are recorded through `recorder`. */
  constructor(
    ctx: ControllerContext<Pick<Flags, "driftRepairPeriod">>,
    firewall: LoadBalancerFirewall,
    recorder: EventRecorder,
    minIntervalMs = MIN_INTERVAL_MS,
  ) {
    this.#firewall = firewall;
    this.#recorder = recorder;
    this.#services = (key) => ctx.informers.for(SERVICES).get(key);
    this.#clock = ctx.clock;
    this.#periodMs = ctx.flags.driftRepairPeriod;
    this.#minIntervalMs = minIntervalMs;
    this.#tokensAt = ctx.clock.now();
    this.#queue = new WorkQueue("firewall", {
      clock: ctx.clock,
      baseDelayMs: 10_000,
      maxDelayMs: 300_000,
      metrics: ctx.metrics,
    });
    this.#rules = ctx.metrics.gauge(
      "firewall_balancer_rules",
      "Firewall rules the CCM keeps for its balancers and the NodePort Services that open theirs.",
    );
    this.#loops = new LoopHealth(ctx.metrics, ctx.conditions);
    this.#leftOutGauge = ctx.metrics.gauge(
      "firewall_balancers_left_out",
      "Balancers the firewall has no room for: their addresses are not allowed (the others' rules are written).",
    );
    this.#writes = ctx.metrics.counter(
      "firewall_rule_writes_total",
      "Times the CCM rewrote the firewall's rules for its balancers (a change, or a repair).",
    );
    const concerns = (svc: Service) => !!firewall.concerns?.(svc);
    // A LoadBalancer Service's change may change a balancer (looked at again); another Service the
    // firewall follows only changes what the informer already shows.
    const seen = (balancer: boolean, svc?: Service) => {
      if (balancer && svc) this.#awaited.add(objectKey(svc));
      this.poke(balancer);
    };
    ctx.informers.for(SERVICES).addHandlers({
      onAdd: (svc) => (hasBalancer(svc) || concerns(svc)) && seen(hasBalancer(svc), svc),
      onDelete: (svc) => {
        this.#awaited.delete(objectKey(svc));
        if (isLoadBalancer(svc) || concerns(svc)) seen(isLoadBalancer(svc));
      },
      // A Service turned from LoadBalancer to another type gives up its address only after its
      // balancer is deleted: that release, a status write on a Service of another type, is the
      // change the firewall must follow (explorer seed 293: the gone balancer's address stayed let
      // in; Hetzner hands released addresses to other customers).
      onUpdate: (a, b) =>
        (hasBalancer(a) || hasBalancer(b) || concerns(a) || concerns(b)) && changed(a, b) &&
        seen(hasBalancer(a) || hasBalancer(b), b),
    });
  }

  /**
   * The service controller is done with the Service `key` (its balancer ensured or released): when
   * that Service changed since, the firewall looks at the balancers again. The sync its change asked
   * for may have run before the balancer followed the change (explorer seed 249: a balancer switched
   * to private targets stayed let in), and nothing else would ask. Costs nothing while no Service
   * changes.
   */
  ensured(key: string): void {
    if (this.#awaited.delete(key)) this.poke();
  }

  /**
   * Asks for a sync: now while the burst lasts, else once a token has come back (one per minimum
   * interval); `balancers`: a balancer may have changed (default), so the provider looks again.
   */
  poke(balancers = true): void {
    this.#dirty ||= balancers;
    // One sync asked for and not started yet sees every later poke's news (a key being processed
    // would run twice if added again before its sync begins).
    if (this.#asked) return;
    this.#asked = true;
    const tokens = this.#refill();
    this.#queue.addAfter(KEY, tokens >= 1 ? 0 : Math.ceil((1 - tokens) * this.#minIntervalMs));
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const clock = this.#clock;
    const periodic = this.#periodMs > 0 && !this.#firewall.watch
      ? clock.setInterval(() => this.#queue.add(KEY), this.#periodMs)
      : undefined;
    this.#firewall.watch?.(() => this.poke(false));
    signal.addEventListener("abort", () => {
      if (periodic !== undefined) clock.clearInterval(periodic);
      this.#queue.shutDown();
    }, { once: true });
    this.#queue.add(KEY);
    await runWorkers(this.#queue, (_key, cancel) => withPriority("loadbalancer", () => this.#sync(cancel)), {
      policy: reconcilePolicy,
      signal,
      loop: { health: this.#loops, name: () => "firewall" },
    });
  }

  /** The tokens now (see {@link BURST}). */
  #refill(): number {
    const now = this.#clock.now();
    this.#tokens = refilled(this.#tokens, this.#tokensAt, now, BURST, this.#minIntervalMs);
    this.#tokensAt = now;
    return this.#tokens;
  }

  async #sync(signal: AbortSignal): Promise<void> {
    // Every sync spends a token, whoever asked (the start, a retry, a sign of a change outside).
    this.#tokens = Math.max(0, this.#refill() - 1);
    this.#asked = false;
    try {
      const dirty = this.#dirty;
      this.#dirty = false;
      let result;
      try {
        result = await this.#firewall.sync(signal, { balancersUnchanged: !dirty });
      } catch (err) {
        this.#dirty ||= dirty;
        throw err;
      }
      this.#rules.set({}, result.rules);
      this.#tell(result.refused ?? []);
      if (result.notice !== this.#notice && result.notice) {
        this.#log.warning("{notice}", { notice: result.notice });
      }
      this.#notice = result.notice;
      const leftOut = (result.leftOut ?? []).join(", ");
      this.#leftOutGauge.set({}, result.leftOut?.length ?? 0);
      if (leftOut && leftOut !== this.#leftOut) {
        this.#log.warning(
          "the firewall has no room for {n} load balancer(s), whose addresses it does not allow: {names} " +
            "(the others' rules are written; free room among the operator's rules, or use fewer public balancers)",
          { n: result.leftOut!.length, names: leftOut },
        );
      }
      this.#leftOut = leftOut;
      if (result.changed) {
        this.#writes.inc();
        this.#log.info("firewall rules for the load balancers written: {rules} rule(s)", {
          rules: result.rules,
        });
      }
    } catch (err) {
      if (!signal.aborted) {
        this.#log.warning("cannot keep the firewall's rules for the load balancers: {error}", {
          error: (err as Error).message,
        });
      }
      throw err;
    }
  }

  /** A Warning on each refused Service, once per message; a Service no longer refused may be told again. */
  #tell(refused: { service: string; message: string }[]): void {
    const now = new Map<string, string>();
    for (const { service, message } of refused) {
      const svc = this.#services(service);
      const uid = svc?.metadata?.uid;
      if (!svc || !uid) continue;
      now.set(uid, message);
      if (this.#told.get(uid) !== message) {
        this.#recorder.event(SERVICES, svc, "Warning", "FirewallNodePortsRefused", message);
      }
    }
    this.#told.clear();
    for (const [uid, message] of now) this.#told.set(uid, message);
  }
}

function isLoadBalancer(svc: Service): boolean {
  return svc.spec?.type === "LoadBalancer";
}

/** What may change the rules: type, ports, annotations (source ranges among them), ingress, deletion. */
/**
 * A LoadBalancer Service, or one that may still have a balancer: it shows an address, or keeps the
 * cleanup finalizer (a CCM starting after the Service turned ClusterIP lists it so: its release
 * is then this CCM's to follow; explorer seed 6462 of workload 1).
 */
function hasBalancer(svc: Service): boolean {
  return isLoadBalancer(svc) || (svc.status?.loadBalancer?.ingress?.length ?? 0) > 0 ||
    (svc.metadata?.finalizers ?? []).includes(LB_FINALIZER);
}

function changed(a: Service, b: Service): boolean {
  return a.spec?.type !== b.spec?.type ||
    JSON.stringify(a.spec?.ports) !== JSON.stringify(b.spec?.ports) ||
    a.spec?.healthCheckNodePort !== b.spec?.healthCheckNodePort ||
    JSON.stringify(a.metadata?.annotations) !== JSON.stringify(b.metadata?.annotations) ||
    JSON.stringify(a.status?.loadBalancer) !== JSON.stringify(b.status?.loadBalancer) ||
    !!a.metadata?.deletionTimestamp !== !!b.metadata?.deletionTimestamp;
}
