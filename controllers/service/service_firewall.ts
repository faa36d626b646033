/**
 * The firewall follows the balancers (the provider's `loadBalancers.firewall`): a sync after a
 * LoadBalancer Service's balancer may have changed — it got or lost its address, its ports or
 * annotations changed, it was deleted — at most once per {@link MIN_INTERVAL_MS}, and once per drift
 * repair period to put back rules changed outside the CCM. One key, one run at a time; a failed run
 * is retried with backoff (a refusal that cannot fit is logged with the numbers and retried slowly).
 *
 * Cost: 0 calls while nothing changes but the periodic check, which tells the provider no Service
 * changed (the hcloud provider then reads only the firewall: 1 request per drift period); a change
 * costs a list of the balancers, a read and one write when rules differ. A tenant changing Services without pause makes it run at most
 * once a minute: about 180 requests an hour.
 *
 * @module
 */
import type { Clock } from "../../lib/clock.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { ControllerContext } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import type { LoadBalancerFirewall } from "../../providers/provider.ts";
import { SERVICES } from "../../kube/resources.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { withPriority } from "../../lib/priority.ts";
import { logger } from "../../lib/log.ts";

/** The fewest milliseconds between two syncs started by Service changes. */
export const MIN_INTERVAL_MS = 60_000;
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
  #lastRun = -Infinity;
  /** A Service changed since the last successful sync (the balancers must be looked at again). */
  #dirty = true;
  readonly #clock: Clock;

  constructor(
    ctx: ControllerContext<Pick<Flags, "driftRepairPeriod">>,
    firewall: LoadBalancerFirewall,
    minIntervalMs = MIN_INTERVAL_MS,
  ) {
    this.#firewall = firewall;
    this.#clock = ctx.clock;
    this.#periodMs = ctx.flags.driftRepairPeriod;
    this.#minIntervalMs = minIntervalMs;
    this.#queue = new WorkQueue("firewall", {
      clock: ctx.clock,
      baseDelayMs: 10_000,
      maxDelayMs: 300_000,
      metrics: ctx.metrics,
    });
    this.#rules = ctx.metrics.gauge(
      "firewall_balancer_rules",
      "Firewall rules the CCM keeps for its balancers.",
    );
    this.#writes = ctx.metrics.counter(
      "firewall_rule_writes_total",
      "Times the CCM rewrote the firewall's rules for its balancers (a change, or a repair).",
    );
    ctx.informers.for(SERVICES).addHandlers({
      onAdd: (svc) => isLoadBalancer(svc) && this.poke(),
      onDelete: (svc) => isLoadBalancer(svc) && this.poke(),
      onUpdate: (a, b) => (isLoadBalancer(a) || isLoadBalancer(b)) && changed(a, b) && this.poke(),
    });
  }

  /** Asks for a sync, no sooner than the minimum interval after the last one. */
  poke(): void {
    this.#dirty = true;
    this.#queue.addAfter(KEY, Math.max(0, this.#lastRun + this.#minIntervalMs - this.#clock.now()));
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const clock = this.#clock;
    const periodic = this.#periodMs > 0
      ? clock.setInterval(() => this.#queue.add(KEY), this.#periodMs)
      : undefined;
    signal.addEventListener("abort", () => {
      if (periodic !== undefined) clock.clearInterval(periodic);
      this.#queue.shutDown();
    }, { once: true });
    this.#queue.add(KEY);
    await runWorkers(this.#queue, (_key, cancel) => withPriority("loadbalancer", () => this.#sync(cancel)), {
      policy: reconcilePolicy,
      signal,
    });
  }

  async #sync(signal: AbortSignal): Promise<void> {
    this.#lastRun = this.#clock.now();
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
}

function isLoadBalancer(svc: Service): boolean {
  return svc.spec?.type === "LoadBalancer";
}

/** What may change a balancer's address or ports: type, ports, annotations, ingress, deletion. */
function changed(a: Service, b: Service): boolean {
  return a.spec?.type !== b.spec?.type ||
    JSON.stringify(a.spec?.ports) !== JSON.stringify(b.spec?.ports) ||
    a.spec?.healthCheckNodePort !== b.spec?.healthCheckNodePort ||
    JSON.stringify(a.metadata?.annotations) !== JSON.stringify(b.metadata?.annotations) ||
    JSON.stringify(a.status?.loadBalancer) !== JSON.stringify(b.status?.loadBalancer) ||
    !!a.metadata?.deletionTimestamp !== !!b.metadata?.deletionTimestamp;
}
