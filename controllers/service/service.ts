/**
 * The service controller (upstream semantics): a load balancer per Service of type LoadBalancer,
 * guarded by the `service.kubernetes.io/load-balancer-cleanup` finalizer, status written only when
 * it changes, per-Service backoff 5 s → 300 s, and a node sync that updates the targets of every
 * load balancer whose eligible node set (by name and provider ID) changed.
 *
 * Services are synced when their spec, annotations or deletion state change, not on resyncs, so an
 * unchanged cluster costs no cloud calls. Invalid input (a `TerminalError`) is reported as a
 * Warning event and retried only when the Service changes. What the controller knows of the node
 * set lives in one `NodeSetMemory` (service_nodes.ts); the balancers as a whole (orphans, missing
 * and drifted ones) are looked after by `LoadBalancerHousekeeping` (lb_housekeeping.ts).
 *
 * @module
 */
import { FirewallFollower } from "./service_firewall.ts";
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { type Controller, type ControllerContext, partMissing } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import { objectKey } from "../../kube/informer.ts";
import { NODES, SERVICES } from "../../kube/resources.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import type { LoadBalancers } from "../../providers/provider.ts";
import { leftNoBalancer, warningsOf } from "../../providers/errors.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { eligibleNode, EXCLUDE_LABEL, nodeSet, NodeSetMemory, sameLabels } from "./service_nodes.ts";
import { heldMessage } from "./node_change_guard.ts";
import { ChangeBudget, throttledMessage } from "./change_budget.ts";
import { type HousekeepingFlags, LoadBalancerHousekeeping } from "./lb_housekeeping.ts";
import { TlsSecretWatch } from "./service_secrets.ts";
import { LB_FINALIZER } from "../../kube/well_known.ts";
import { failedCondition, readyCondition, statusPatch } from "./service_status.ts";
import { hasFinalizer, patchAnnotations, patchStatus, sameIngress, setFinalizer } from "./service_writes.ts";
import { ServiceWarnings } from "./service_warnings.ts";
import { releaseBalancer, type ServiceDeletionParts } from "./service_deletion.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type ServiceFlags = Pick<
  Flags,
  "clusterName" | "concurrentServiceSyncs" | "loadBalancerClass" | keyof HousekeepingFlags
>;

/** The component name on events. */
export const SERVICE_COMPONENT = "service-controller";
const NODE_SYNC_PERIOD_MS = 100_000;
/** A draining Node's end is checked this long after it is due (timers may fire a little early). */
const DRAIN_SLACK_MS = 50;
/** The node queue's one key: node syncs coalesce into one run at a time. */
const NODE_SYNC = "node-sync";

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
  /** The provider's warnings, on the Service or the Node they name (service_warnings.ts). */
  readonly #warnings: ServiceWarnings;
  /** What releasing a balancer works with (service_deletion.ts). */
  readonly #deletion: ServiceDeletionParts;
  readonly #log = logger("service");
  readonly #housekeeping: LoadBalancerHousekeeping;
  /** Annotation keys the provider keeps state in: writing them is no reason to sync again. */
  readonly #stateKeys = new Set<string>();
  readonly #nodeSets = new NodeSetMemory(
    () => this.#ctx.informers.for(NODES).list(),
    () => this.#ctx.clock.now(),
  );
  /** Syncs started by tenants' changes, per namespace (change_budget.ts). */
  readonly #budget = new ChangeBudget(undefined, undefined, () => this.#ctx.clock.now());
  /** The TLS Secrets balancers serve certificates from, when the provider can (service_secrets.ts). */
  readonly #secrets?: TlsSecretWatch;
  /** The firewall that follows the balancers, when the provider keeps one (service_firewall.ts). */
  readonly #firewall?: FirewallFollower;

  constructor(ctx: ControllerContext<ServiceFlags>, lbs: LoadBalancers) {
    this.#ctx = ctx;
    this.#lbs = lbs;
    this.#queue = new WorkQueue("service", {
      baseDelayMs: 5_000,
      maxDelayMs: 300_000,
      metrics: ctx.metrics,
      clock: ctx.clock,
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
    // Labels count as a cost only where a balancer's node-selector reads them.
    this.#nodeSets.labelsMatter = () => {
      const nodeTargets = this.#lbs.nodeTargets;
      if (!nodeTargets) return true;
      return this.#ctx.informers.for(SERVICES).list().some((svc) =>
        this.#wants(svc) && nodeTargets.selected(svc, []) !== undefined
      );
    };
    // A Node whose labels change too often is held (probe P4): said on the Node, once per hold.
    this.#nodeSets.onHeld = ({ node, releaseInMs }) =>
      this.#recorder.event(NODES, node, "Warning", "NodeChangesHeld", heldMessage(releaseInMs));
    this.#housekeeping = new LoadBalancerHousekeeping(ctx, lbs.inventory, this.#recorder, {
      wanted: () => this.#ctx.informers.for(SERVICES).list().filter((s) => this.#wants(s)),
      synced: () => this.#syncedServices(),
      balancerOf: (svc) => lbs.getLoadBalancerName(ctx.flags.clusterName, svc),
      resync: (svc, recreate) => {
        if (recreate) this.#nodeSets.forget(objectKey(svc));
        this.#queue.add(objectKey(svc));
      },
    });
    const enqueue = (svc: Service) => {
      if (this.#wants(svc) || hasFinalizer(svc)) this.#queue.add(objectKey(svc));
    };
    // What a tenant changes is admitted from its namespace's budget (change_budget.ts); the informer's
    // first list is the CCM's own start, not a tenant's change.
    const changed = (svc: Service) => {
      if (!this.#wants(svc) && !hasFinalizer(svc)) return;
      if (!ctx.informers.for(SERVICES).hasSynced()) return enqueue(svc);
      const key = objectKey(svc);
      const admitted = this.#budget.admit(svc.metadata?.namespace ?? "default", key);
      if (!admitted) return;
      if (admitted.delayMs === 0) return this.#queue.add(key);
      this.#queue.addAfter(key, admitted.delayMs);
      if (admitted.warn) {
        this.#recorder.event(
          SERVICES,
          svc,
          "Warning",
          "ServiceChangesThrottled",
          throttledMessage(admitted.delayMs),
        );
      }
    };
    if (lbs.tlsSecrets) {
      const secrets = this.#secrets = new TlsSecretWatch(
        ctx.informers,
        lbs.tlsSecrets,
        (problem) => ctx.conditions?.set("tls-secrets", problem),
      );
      // A Secret that appears, changes or goes: the Services naming it are synced with its content.
      secrets.onChange((namespace, name) => {
        for (const svc of ctx.informers.for(SERVICES).list()) {
          if (this.#wants(svc) && secrets.names(svc, namespace, name)) this.#queue.add(objectKey(svc));
        }
      });
    }
    ctx.informers.for(SERVICES).addHandlers({
      onAdd: changed,
      onUpdate: (old, svc) => {
        if (old !== svc && relevant(old, this.#stateKeys) !== relevant(svc, this.#stateKeys)) changed(svc);
      },
      onDelete: (svc) => this.#nodeSets.forget(objectKey(svc)),
    });
    const nodeSync = () => {
      this.#nodeSets.nodesChanged();
      this.#nodeQueue.addAfter(NODE_SYNC, this.#nodeSets.syncPaceMs());
    };
    ctx.informers.for(NODES).addHandlers({
      onAdd: nodeSync,
      onDelete: nodeSync,
      onUpdate: (old, node) => {
        // Any real change may alter what providers read (addresses, say); resyncs (old === node) do not.
        if (old !== node) this.#nodeSets.nodesChanged();
        if (
          eligibleNode(old) !== eligibleNode(node) || old.spec?.providerID !== node.spec?.providerID ||
          old.metadata?.labels?.[EXCLUDE_LABEL] !== node.metadata?.labels?.[EXCLUDE_LABEL]
        ) nodeSync();
        // A label may move the Node in or out of a balancer's node selector: only balancers whose
        // targets change are updated (see #selection), so this costs no cloud call otherwise.
        else if (this.#lbs.nodeTargets && !sameLabels(old, node)) nodeSync();
      },
    });
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
        { workers: this.#ctx.flags.concurrentServiceSyncs, policy: reconcilePolicy, signal },
      ),
      runWorkers(
        this.#nodeQueue,
        (_key, cancel) => withPriority("loadbalancer", () => this.#syncNodes(cancel)),
        { policy: reconcilePolicy, signal },
      ),
      this.#housekeeping.run(signal),
      this.#firewall?.run(signal),
    ]);
  }

  /** How long balancers keep a Node that leaves (0: removed at once, as upstream; the provider says). */
  #drainMs(): number {
    return this.#lbs.nodeTargets?.drainPeriodMs?.() ?? 0;
  }

  #wants(svc: Service): boolean {
    if (svc.spec?.type !== "LoadBalancer") return false;
    const cls = svc.spec.loadBalancerClass;
    return cls === undefined || cls === null ||
      (this.#ctx.flags.loadBalancerClass !== "" && cls === this.#ctx.flags.loadBalancerClass);
  }

  /**
   * What the Service's balancer targets, to compare with its last sync: the Nodes the provider says it
   * selects (a node selector, say; else the whole set), and those it keeps while they drain (`keep`).
   */
  #selection(key: string, svc: Service, nodes: Node[], set: string): { target: string; keep: Set<string> } {
    const names = this.#lbs.nodeTargets?.selected(svc, nodes);
    const keep = this.#nodeSets.keep(key, names, nodes, this.#drainMs());
    if (!names) return { target: set, keep };
    return {
      target: nodeSet(nodes.filter((n) => names.has(n.metadata!.name!) || keep.has(n.metadata!.name!))),
      keep,
    };
  }

  async #sync(key: string, signal: AbortSignal): Promise<void> {
    const svc = this.#ctx.informers.for(SERVICES).get(key);
    if (!svc) {
      this.#nodeSets.forget(key);
      return;
    }
    const cluster = this.#ctx.flags.clusterName;
    if (hasFinalizer(svc) && (svc.metadata?.deletionTimestamp || !this.#wants(svc))) {
      await releaseBalancer(this.#deletion, svc, signal);
      this.#nodeSets.forget(key);
      // A create still in flight from before a crash could land after this; sweep for it later.
      this.#housekeeping.sweepSoon();
      return;
    }
    if (!this.#wants(svc)) return;
    // The finalizer lands before any cloud call; a Service already gone gets no load balancer.
    if (!hasFinalizer(svc) && !(await setFinalizer(this.#ctx.client, svc, true))) return;
    const { nodes, set } = this.#nodeSets.targets(this.#drainMs());
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
    const selection = this.#selection(key, svc, nodes, set);
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
      this.#warnings.say(svc, [...warningsOf(err)]);
      this.#recorder.event(
        SERVICES,
        svc,
        "Warning",
        "SyncLoadBalancerFailed",
        `Error syncing load balancer: ${(err as Error).message}`,
      );
      const lost = leftNoBalancer(err) && this.#lostIngress(svc);
      // The failure goes on the Service too; a write that fails here must not hide the sync's error.
      await patchStatus(this.#ctx.client, svc, statusPatch(svc, failedCondition(err), lost ? [] : undefined))
        .catch((e) =>
          this.#log.warning("cannot write the status of {service}: {error}", {
            service: key,
            error: (e as Error).message,
          })
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
    this.#nodeSets.synced(key, selection.target);
    // Nodes may have changed while the load balancer was being ensured, or a Node it kept may have
    // drained meanwhile (a node sync then removed it, and this ensure, computed before, put it back:
    // the draining test's rare stall); a node sync then catches up, as it does when a kept Node drains.
    const after = this.#nodeSets.targets(this.#drainMs());
    if (after.set !== set) this.#nodeQueue.add(NODE_SYNC);
    else if (selection.keep.size) {
      if (this.#selection(key, svc, after.nodes, after.set).target !== selection.target) {
        this.#nodeQueue.add(NODE_SYNC);
      } else this.#scheduleDrainEnd();
    }
    this.#recorder.event(SERVICES, svc, "Normal", "EnsuredLoadBalancer", "Ensured load balancer");
  }

  /**
   * After a sync that failed leaving the Service without a balancer of its own (the provider says so:
   * none found and none made, or its name refused): whether it still advertises addresses, which the
   * cloud may give to another balancer (security probe O4, N6); the caller clears them. No cloud call.
   */
  #lostIngress(svc: Service): boolean {
    if (!(svc.status?.loadBalancer?.ingress ?? []).length) return false;
    this.#log.warning("the load balancer of {service} is gone and was not made again; clearing its ingress", {
      service: objectKey(svc),
    });
    return true;
  }

  /** The Services whose last sync succeeded and that still want a balancer. */
  #syncedServices(): Service[] {
    return this.#ctx.informers.for(SERVICES).list().filter((svc) =>
      this.#nodeSets.syncedWith(objectKey(svc)) !== undefined && this.#wants(svc) &&
      !svc.metadata?.deletionTimestamp
    );
  }

  /** Updates the targets of every load balancer whose node set changed. */
  async #syncNodes(signal: AbortSignal): Promise<void> {
    const { nodes, set } = this.#nodeSets.targets(this.#drainMs());
    const targets = new Map<string, { target: string; keep: Set<string> }>();
    const stale = this.#ctx.informers.for(SERVICES).list().filter((svc) => {
      const key = objectKey(svc);
      const last = this.#nodeSets.syncedWith(key);
      if (last === undefined || !this.#wants(svc) || svc.metadata?.deletionTimestamp) return false;
      const selection = this.#selection(key, svc, nodes, set);
      targets.set(key, selection);
      return last !== selection.target;
    });
    // A draining Node leaves the balancers once their health checks have had time to fail it.
    this.#scheduleDrainEnd();
    // Shared work (server labels) follows the node set itself, whether or not a Service is stale:
    // after a restart or a run of failed syncs none may be, and the labels must not lag.
    // Only while some Service wants a load balancer: the first ensure labels the servers anyway.
    const anyWanted = this.#ctx.informers.for(SERVICES).list().some((svc) => this.#wants(svc));
    if (this.#lbs.nodeTargets && anyWanted && this.#nodeSets.needsSharedWork(set)) {
      await this.#lbs.nodeTargets.sync(this.#ctx.flags.clusterName, nodes, signal);
      this.#nodeSets.sharedWorkDone(set);
    }
    const limit = Math.max(1, this.#ctx.flags.concurrentServiceSyncs);
    for (let i = 0; i < stale.length; i += limit) {
      await Promise.all(
        stale.slice(i, i + limit).map(async (svc) => {
          const key = objectKey(svc);
          try {
            const selection = targets.get(key)!;
            const result = await this.#lbs.updateLoadBalancer({
              clusterName: this.#ctx.flags.clusterName,
              service: svc,
              nodes,
              ...keepOption(selection.keep),
            }, signal);
            this.#warnings.say(svc, result?.warnings);
            this.#nodeSets.synced(key, selection.target);
            // Events only for work done: a label-selector balancer or a missing one was not updated.
            if (result && result.updated === false) return;
            this.#recorder.event(
              SERVICES,
              svc,
              "Normal",
              "UpdatedLoadBalancer",
              "Updated load balancer with new hosts",
            );
          } catch (err) {
            if (signal.aborted) return; // cancelled, not failed
            const names = nodes.slice(0, 20).map((n) => n.metadata?.name).join(", ");
            this.#recorder.event(
              SERVICES,
              svc,
              "Warning",
              "UpdateLoadBalancerFailed",
              `Error updating load balancer with new hosts ${names} [node names limited, total number of nodes: ${nodes.length}], error: ${
                (err as Error).message
              }`,
            );
            this.#queue.addRateLimited(key);
          }
        }),
      );
    }
  }

  /**
   * A node sync once the next draining Node's period is over, and once a held Node may be taken again
   * (none while nothing drains or is held).
   */
  #scheduleDrainEnd(): void {
    const drainEnd = this.#nodeSets.nextDrainEnd(this.#drainMs());
    if (drainEnd !== undefined) this.#nodeQueue.addAfter(NODE_SYNC, drainEnd + DRAIN_SLACK_MS);
    const release = this.#nodeSets.nextRelease();
    if (release !== undefined) this.#nodeQueue.addAfter(NODE_SYNC, release + DRAIN_SLACK_MS);
  }

  /** Writes the provider's state annotations; their keys never make a sync worth running. */
  async #patchAnnotations(svc: Service, annotations: Record<string, string | null>): Promise<void> {
    for (const key of Object.keys(annotations)) this.#stateKeys.add(key);
    await patchAnnotations(this.#ctx.client, svc, annotations);
  }
}

/** The Nodes a balancer keeps while they drain, for the provider (nothing when none). */
function keepOption(keep: Set<string>): { keep?: ReadonlySet<string> } {
  return keep.size ? { keep } : {};
}

/** What makes a Service worth a sync: spec, annotations, deletion, identity. */
function relevant(svc: Service, stateKeys: Set<string>): string {
  const annotations = Object.entries(svc.metadata?.annotations ?? {}).filter(([k]) => !stateKeys.has(k));
  return JSON.stringify([
    svc.spec,
    annotations,
    svc.metadata?.deletionTimestamp,
    svc.metadata?.uid,
  ]);
}

export { LB_FINALIZER };
