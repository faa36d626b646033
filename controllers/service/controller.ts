/**
 * The service controller (upstream semantics): a load balancer per Service of type LoadBalancer,
 * guarded by the `service.kubernetes.io/load-balancer-cleanup` finalizer, status written only when
 * it changes, per-Service backoff 5 s → 300 s, and a node sync that updates the targets of every
 * load balancer whose eligible node set (by name and provider ID) changed.
 *
 * Services are synced when their spec, annotations or deletion state change, not on resyncs, so an
 * unchanged cluster costs no cloud calls. Invalid input (a `TerminalError`) is reported as a
 * Warning event and retried only when the Service changes. What the loops share — which Services are
 * served, what their balancers were synced with, the draining and held Nodes — is one `ServiceBook`
 * (book.ts) each is given; what queues work is in triggers.ts, a node sync in node_sync.ts, a failed
 * sync's report in failure.ts; the balancers as a whole (orphans, missing and drifted ones) are looked
 * after by `LoadBalancerHousekeeping` (controllers/lb_housekeeping/), the firewall by `FirewallFollower` (controllers/lb_firewall/).
 *
 * @module
 */
import { FirewallFollower } from "../lb_firewall/mod.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { type Controller, type ControllerContext, partMissing } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import { objectKey } from "../../kube/informer.ts";
import { NODES, SERVICES } from "../../kube/resources.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import type { LoadBalancers } from "../../providers/provider.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { LoopHealth } from "../../lib/loop_health.ts";
import { type NodeSetMemory, targetable } from "./nodes.ts";
import { heldMessage } from "./node_change_guard.ts";
import { ChangeBudget } from "./change_budget.ts";
import { type HousekeepingFlags, LoadBalancerHousekeeping } from "../lb_housekeeping/mod.ts";
import { TlsSecretWatch } from "./secrets.ts";
import { LB_FINALIZER } from "../../kube/well_known.ts";
import { readyCondition, statusPatch } from "./status.ts";
import { reportSyncFailure } from "./failure.ts";
import { hasFinalizer, patchAnnotations, patchStatus, sameIngress, setFinalizer } from "./writes.ts";
import { ServiceWarnings } from "./warnings.ts";
import { keepOption, ServiceBook } from "./book.ts";
import { releaseBalancer, type ServiceDeletionParts } from "./deletion.ts";
import { type TriggerParts, watchNodes, watchSecrets, watchServices } from "./triggers.ts";
import { type NodeSyncParts, syncNodes } from "./node_sync.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type ServiceFlags = Pick<
  Flags,
  | "clusterName"
  | "concurrentServiceSyncs"
  | "loadBalancerClass"
  | "loadBalancerClassExclusive"
  | keyof HousekeepingFlags
>;

/** The component name on events. */
export const SERVICE_COMPONENT = "service-controller";
const NODE_SYNC_PERIOD_MS = 100_000;
/** A draining Node's end is checked this long after it is due (timers may fire a little early). */
const DRAIN_SLACK_MS = 50;
/** The node queue's one key: node syncs coalesce into one run at a time. */
const NODE_SYNC = "node-sync";

/** The namespace of a Service's queue key (`namespace/name`). */
const namespaceOf = (key: string) => key.slice(0, Math.max(0, key.indexOf("/")));

/** Builds the controller, or says why it cannot run. */
export function serviceController(ctx: ControllerContext<ServiceFlags>): Controller | { disabled: string } {
  const lbs = ctx.provider.loadBalancers;
  if (!lbs) {
    return partMissing(ctx.provider, "loadBalancers", "has no load balancers");
  }
  return new ServiceController(ctx, lbs);
}

class ServiceController implements Controller {
  readonly name = "service-lb-controller";
  readonly #ctx: ControllerContext<ServiceFlags>;
  readonly #lbs: LoadBalancers;
  readonly #queue: WorkQueue;
  readonly #nodeQueue: WorkQueue;
  readonly #recorder;
  /** The provider's warnings, on the Service or the Node they name (warnings.ts). */
  readonly #warnings: ServiceWarnings;
  /** What releasing a balancer works with (deletion.ts). */
  readonly #deletion: ServiceDeletionParts;
  /** What a node sync works with (node_sync.ts). */
  readonly #nodeSync: NodeSyncParts;
  readonly #log = logger("service");
  readonly #housekeeping: LoadBalancerHousekeeping;
  /** What the loops share: which Services are served, what their balancers target (book.ts). */
  readonly #book: ServiceBook;
  readonly #nodeSets: NodeSetMemory;
  /** Syncs started by tenants' changes, per namespace (change_budget.ts). */
  readonly #budget = new ChangeBudget(undefined, undefined, () => this.#ctx.clock.now());
  /** The TLS Secrets balancers serve certificates from, when the provider can (secrets.ts). */
  readonly #secrets?: TlsSecretWatch;
  /** The firewall that follows the balancers, when the provider keeps one (controllers/lb_firewall/). */
  readonly #firewall?: FirewallFollower;

  constructor(ctx: ControllerContext<ServiceFlags>, lbs: LoadBalancers) {
    this.#ctx = ctx;
    this.#lbs = lbs;
    this.#book = new ServiceBook(ctx.informers, ctx.flags, lbs, ctx.clock);
    this.#nodeSets = this.#book.nodeSets;
    this.#queue = new WorkQueue("service", {
      baseDelayMs: 5_000,
      maxDelayMs: 300_000,
      metrics: ctx.metrics,
      clock: ctx.clock,
      // Namespaces take turns (review Q4).
      writerOf: namespaceOf,
    });
    this.#nodeQueue = new WorkQueue("service-nodes", {
      clock: ctx.clock,
      baseDelayMs: 1_000,
      maxDelayMs: 60_000,
      metrics: ctx.metrics,
    });
    this.#recorder = ctx.recorder(SERVICE_COMPONENT);
    if (lbs.firewall) this.#firewall = new FirewallFollower(ctx, lbs.firewall, this.#recorder);
    this.#warnings = new ServiceWarnings(
      this.#recorder,
      (name) => ctx.informers.for(NODES).get(name),
      () => ctx.clock.now(),
    );
    this.#deletion = {
      client: ctx.client,
      lbs,
      recorder: this.#recorder,
      clusterName: ctx.flags.clusterName,
      patchAnnotations: (svc, annotations) => this.#patchAnnotations(svc, annotations),
    };
    this.#nodeSync = {
      book: this.#book,
      lbs,
      scheduleDrainEnd: () => this.#scheduleDrainEnd(),
      clusterName: ctx.flags.clusterName,
      concurrency: ctx.flags.concurrentServiceSyncs,
      recorder: this.#recorder,
      warnings: this.#warnings,
      retry: (key) => this.#queue.addRateLimited(key, this.#payRetry),
      // Explorer seed 72 of workload 3: a node selector's balancer made while its pool was empty got
      // its first target from a node sync; the firewall, last told at the ensure, never let it in.
      targetableChanged: () => this.#firewall?.poke(),
    };
    // Labels count as a cost only where a balancer's node-selector reads them.
    this.#nodeSets.labelsMatter = () => this.#book.labelsMatter();
    // A Node whose labels change too often is held (probe P4): said on the Node, once per hold.
    this.#nodeSets.onHeld = ({ node, releaseInMs }) =>
      this.#recorder.event(NODES, node, "Warning", "NodeChangesHeld", heldMessage(releaseInMs));
    this.#housekeeping = new LoadBalancerHousekeeping(ctx, lbs.inventory, this.#recorder, {
      wanted: () => this.#book.wanted(),
      synced: () => this.#book.synced(),
      balancerOf: (svc) => lbs.getLoadBalancerName(ctx.flags.clusterName, svc),
      resync: (svc, recreate) => {
        if (recreate) this.#nodeSets.forget(objectKey(svc));
        this.#queue.add(objectKey(svc));
      },
      deleted: () => this.#firewall?.poke(),
    });
    if (lbs.tlsSecrets) {
      this.#secrets = new TlsSecretWatch(
        ctx.informers,
        lbs.tlsSecrets,
        (problem) => ctx.conditions?.set("tls-secrets", problem),
      );
    }
    const triggers: TriggerParts = {
      informers: ctx.informers,
      recorder: this.#recorder,
      budget: this.#budget,
      queue: this.#queue,
      book: this.#book,
      nodeSync: () => {
        this.#nodeSets.nodesChanged();
        this.#nodeQueue.addAfter(NODE_SYNC, this.#nodeSets.syncPaceMs());
      },
      labelsSelect: lbs.nodeTargets !== undefined,
    };
    watchServices(triggers);
    if (this.#secrets) watchSecrets(triggers, this.#secrets);
    watchNodes(triggers);
  }

  async run(signal: AbortSignal): Promise<void> {
    // New credentials (or the cloud accepting them again): what failed meanwhile is retried now, and
    // one look at every balancer finds what else changed; no call per Service that is in step.
    this.#ctx.provider.onCloudChanged?.(() => {
      const retried = this.#queue.retryFailedNow();
      this.#nodeQueue.retryFailedNow();
      this.#housekeeping.checkNow();
      this.#log.info("credentials changed: {n} failed Service sync(s) retried now, every balancer checked", {
        n: retried.length,
      });
    });
    // A start syncs every Service, each looking its balancer up: one look at them all first (the
    // restart benchmark: 50 of a start's 77 requests at 1000 Nodes were these lookups).
    try {
      await this.#lbs.prefetch?.(this.#book.wanted(), signal);
    } catch (err) {
      if (signal.aborted) return;
      this.#log.info("balancers not looked at before the first syncs ({error}); each looks its own up", {
        error: (err as Error).message,
      });
    }
    const clock = this.#ctx.clock;
    const periodic = clock.setInterval(() => this.#nodeQueue.add(NODE_SYNC), NODE_SYNC_PERIOD_MS);
    this.#nodeQueue.add(NODE_SYNC);
    signal.addEventListener("abort", () => {
      clock.clearInterval(periodic);
      this.#queue.shutDown();
      this.#nodeQueue.shutDown();
    }, { once: true });
    await Promise.all([
      runWorkers(
        this.#queue,
        (key, cancel) => withPriority("service", () => this.#sync(key, cancel)),
        {
          workers: this.#ctx.flags.concurrentServiceSyncs,
          policy: reconcilePolicy,
          signal,
          payRetry: this.#payRetry,
        },
      ),
      runWorkers(
        this.#nodeQueue,
        (_key, cancel) => withPriority("loadbalancer", () => syncNodes(this.#nodeSync, cancel)),
        {
          policy: reconcilePolicy,
          signal,
          loop: { health: new LoopHealth(this.#ctx.metrics, this.#ctx.conditions), name: () => "node-sync" },
        },
      ),
      this.#housekeeping.run(signal),
      this.#firewall?.run(signal),
    ]);
  }

  /** A failed sync's retry is paid from its namespace's budget, as its changes are (review Q3). */
  readonly #payRetry = (key: string, delayMs: number) => this.#budget.payRetry(namespaceOf(key), delayMs);

  async #sync(key: string, signal: AbortSignal): Promise<void> {
    const svc = this.#ctx.informers.for(SERVICES).get(key);
    if (!svc) {
      this.#nodeSets.forget(key);
      this.#book.carried.forget(key);
      return;
    }
    const cluster = this.#ctx.flags.clusterName;
    if (this.#book.classlessUnderExclusive(svc) && hasFinalizer(svc) && !svc.metadata?.deletionTimestamp) {
      if (!(await this.#book.carried.resolve(key, svc, signal))) {
        // Our finalizer on a Service we never served (a tenant wrote it): nothing in the cloud is its;
        // the finalizer goes so the Service can, and the Service is another implementation's.
        this.#log.info(
          "{key}: has the load-balancer finalizer but no balancer of its own; left to its class",
          {
            key,
          },
        );
        await setFinalizer(this.#ctx.client, svc, false);
        return;
      }
    }
    if (hasFinalizer(svc) && (svc.metadata?.deletionTimestamp || !this.#book.wants(svc))) {
      try {
        await releaseBalancer(this.#deletion, svc, signal);
      } catch (err) {
        // The balancer may be gone though a write after it failed (the finalizer, the status): the
        // firewall looks again now, not after this key's backoff (explorer seed 6462 of workload 1).
        this.#firewall?.poke();
        throw err;
      }
      this.#firewall?.ensured(key);
      this.#nodeSets.forget(key);
      // A create still in flight from before a crash could land after this; sweep for it later.
      this.#housekeeping.sweepSoon();
      return;
    }
    if (!this.#book.wants(svc)) return;
    // The finalizer lands before any cloud call; a Service already gone gets no load balancer.
    if (!hasFinalizer(svc) && !(await setFinalizer(this.#ctx.client, svc, true))) return;
    const { nodes, set } = this.#nodeSets.targets(this.#book.drainMs());
    if (this.#nodeSets.eligible().nodes.length === 0) {
      this.#recorder.event(
        SERVICES,
        svc,
        "Warning",
        "UnAvailableLoadBalancer",
        "There are no available nodes for LoadBalancer",
      );
    }
    this.#recorder.event(SERVICES, svc, "Normal", "EnsuringLoadBalancer", "Ensuring load balancer");
    const selection = this.#book.selection(key, svc, nodes, set);
    let result;
    try {
      const secrets = this.#secrets?.secretsOf(svc);
      result = await this.#lbs.ensureLoadBalancer({
        clusterName: cluster,
        service: svc,
        nodes,
        ...keepOption(selection.keep),
        ...(secrets?.size ? { secrets } : {}),
      }, signal);
    } catch (err) {
      if (signal.aborted) throw err; // cancelled, not failed: no event
      await reportSyncFailure(
        { client: this.#ctx.client, recorder: this.#recorder, warnings: this.#warnings, log: this.#log },
        svc,
        err,
      );
      throw err; // a TerminalError waits for the Service to change (reconcilePolicy)
    }
    this.#warnings.say(svc, result.warnings);
    if (result.annotations) await this.#patchAnnotations(svc, result.annotations);
    const ingressChanged = !sameIngress(svc.status?.loadBalancer?.ingress ?? [], result.ingress);
    await patchStatus(
      this.#ctx.client,
      svc,
      statusPatch(svc, readyCondition(result.warnings), ingressChanged ? result.ingress : undefined),
    );
    // A balancer that got its first targets (or lost its last) may need the firewall's opening, or
    // no longer: the follower was last told at the Service's change, before (explorer seed 83 of
    // workload 3). Unknown since a start counts as none: the follower's first look may predate this.
    if (targetable(this.#nodeSets.syncedWith(key)) !== targetable(selection.target)) this.#firewall?.poke();
    this.#nodeSets.synced(key, selection.target);
    // Nodes may have changed while the balancer was being ensured: a node sync then may have skipped
    // this Service (not synced yet) or been undone by this ensure, computed before. So its selection
    // is looked at again now, against what was ensured: a node sync catches up on a difference, and a
    // Node that left meanwhile is recorded as draining, its end scheduled (the draining test's stall:
    // w2 left the pool between the first ensure and its record, and nothing looked again).
    const after = this.#nodeSets.targets(this.#book.drainMs());
    const again = this.#book.selection(key, svc, after.nodes, after.set);
    if (after.set !== set || again.target !== selection.target) this.#nodeQueue.add(NODE_SYNC);
    else if (again.keep.size) this.#scheduleDrainEnd();
    this.#firewall?.ensured(key);
    this.#recorder.event(SERVICES, svc, "Normal", "EnsuredLoadBalancer", "Ensured load balancer");
  }

  /**
   * A node sync once the next draining Node's period is over, and once a held Node may be taken again
   * (none while nothing drains or is held).
   */
  #scheduleDrainEnd(): void {
    const drainEnd = this.#nodeSets.nextDrainEnd(this.#book.drainMs());
    if (drainEnd !== undefined) this.#nodeQueue.addAfter(NODE_SYNC, drainEnd + DRAIN_SLACK_MS);
    const release = this.#nodeSets.nextRelease();
    if (release !== undefined) this.#nodeQueue.addAfter(NODE_SYNC, release + DRAIN_SLACK_MS);
    if (drainEnd !== undefined || release !== undefined) {
      this.#log.debug(
        "node sync asked for in {drain} ms (a drain ends) / {release} ms (a held Node is taken)",
        {
          drain: drainEnd ?? "-",
          release: release ?? "-",
        },
      );
    }
  }

  /** Writes the provider's state annotations; their keys never make a sync worth running. */
  async #patchAnnotations(svc: Service, annotations: Record<string, string | null>): Promise<void> {
    for (const key of Object.keys(annotations)) this.#book.stateKeys.add(key);
    await patchAnnotations(this.#ctx.client, svc, annotations);
  }
}

export { LB_FINALIZER };
