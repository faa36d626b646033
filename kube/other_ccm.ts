/**
 * Another cloud-controller-manager acting on this cluster. An installer that puts the official CCM
 * back (k3s's helm-controller reconciling kube-hetzner's HelmChart, a re-applied release asset, a
 * kustomize patch carrying `--leader-elect=false`) makes two CCMs undo each other's balancers and
 * Node fields. With leader election on one lease the two take turns; without it only what runs tells
 * them apart. So ours watches the ReplicaSets and DaemonSets of one namespace and stands by while any
 * of them runs, or is asked to run, a pod with another CCM's image.
 *
 * ReplicaSets, not Deployments: during a rolling update a Deployment's template names the new image
 * while the old ReplicaSet's pods still run; each ReplicaSet's template is exact for its own pods.
 * Only names, images and counts are kept (a pod template can hold literal env values).
 *
 * @module
 */
import type { KubeClient } from "./client.ts";
import { KubeApiError } from "./errors.ts";
import type { EventRecorder } from "./events.ts";
import { Informer } from "./informer.ts";
import { DAEMON_SETS, DEPLOYMENTS, REPLICA_SETS, type ResourceType } from "./resources.ts";
import type { Clock } from "../lib/clock.ts";
import { logger } from "../lib/log.ts";

/** A workload running another CCM, named as an operator finds it (the Deployment of a ReplicaSet). */
export interface OtherCcm {
  kind: "Deployment" | "ReplicaSet" | "DaemonSet";
  namespace: string;
  name: string;
  uid?: string;
  /** The matching image as the template writes it. */
  image: string;
  /** Pods it has now (Pending ones included). */
  pods: number;
}

/** What the guard keeps of a ReplicaSet or DaemonSet. */
export interface Workload {
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    owner?: { kind: string; name: string; uid?: string };
  };
  images: string[];
  /** Pods asked for (a ReplicaSet's `spec.replicas`, a DaemonSet's desired count). */
  wanted: number;
  /** Pods that exist. */
  pods: number;
}

/** Cuts a ReplicaSet (or with `daemon`, a DaemonSet) to a {@link Workload} (the informers' transform). */
export function workloadOf(object: unknown, daemon = false): Workload {
  // deno-lint-ignore no-explicit-any
  const o = object as any;
  const owner = (o.metadata?.ownerReferences ?? []).find((r: { controller?: boolean }) => r.controller);
  return {
    metadata: {
      name: o.metadata?.name,
      namespace: o.metadata?.namespace,
      uid: o.metadata?.uid,
      resourceVersion: o.metadata?.resourceVersion,
      owner: owner ? { kind: owner.kind, name: owner.name, uid: owner.uid } : undefined,
    },
    images: (o.spec?.template?.spec?.containers ?? []).map((c: { image?: string }) => c.image ?? ""),
    wanted: daemon ? o.status?.desiredNumberScheduled ?? 0 : o.spec?.replicas ?? 1,
    pods: daemon
      ? (o.status?.currentNumberScheduled ?? 0) + (o.status?.numberMisscheduled ?? 0)
      : o.status?.replicas ?? 0,
  };
}

/** An image reference's repository name: `hcloud-cloud-controller-manager` of `docker.io/x/hcloud-cloud-controller-manager:v1@sha256:…`. */
export function imageName(image: string): string {
  const path = image.split("@")[0];
  const last = path.slice(path.lastIndexOf("/") + 1);
  const colon = last.indexOf(":");
  return colon < 0 ? last : last.slice(0, colon);
}

/** Settings of an {@link OtherCcmGuard}. */
export interface OtherCcmGuardOptions {
  /** Where the other CCM would run (the installers all use kube-system). */
  namespace: string;
  /** Repository names of the other CCMs' images (any registry, tag or digest). */
  images: readonly string[];
  /** A Warning event on each workload found, once per workload. */
  recorder?: EventRecorder;
  clock?: Clock;
}

/** Watches for another CCM; {@link acting} says who, {@link waitClear} waits until nobody. */
export class OtherCcmGuard {
  readonly #options: OtherCcmGuardOptions;
  readonly #informers: { kind: "ReplicaSet" | "DaemonSet"; informer: Informer<Workload> }[];
  readonly #listeners = new Set<() => void>();
  readonly #reported = new Set<string>();
  readonly #blind = new Map<string, string>();
  readonly #log = logger("other-ccm");
  #standingBy = false;

  constructor(client: KubeClient, options: OtherCcmGuardOptions) {
    this.#options = options;
    const watch = (kind: "ReplicaSet" | "DaemonSet") => {
      const type = kind === "DaemonSet" ? DAEMON_SETS : REPLICA_SETS;
      const informer = new Informer<Workload>(
        client,
        type as ResourceType<unknown> as ResourceType<Workload>,
        {
          namespace: options.namespace,
          transform: (o) => workloadOf(o, kind === "DaemonSet"),
          clock: options.clock,
          backoff: { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 },
        },
      );
      const changed = () => this.#changed();
      informer.addHandlers({ onAdd: changed, onUpdate: changed, onDelete: changed });
      informer.onHealth((err) => {
        // Without the grant (an older ClusterRole) the guard is blind, not a reason to stop the CCM.
        if (err instanceof KubeApiError && (err.status === 403 || err.status === 404)) {
          if (!this.#blind.has(type.plural)) {
            this.#log.warning(
              "cannot list {plural} in {namespace} ({error}): another cloud-controller-manager there would go unseen; grant list and watch on apps {plural} in {namespace}",
              { plural: type.plural, namespace: options.namespace, error: err.message },
            );
          }
          this.#blind.set(type.plural, err.message);
        } else if (err === undefined) this.#blind.delete(type.plural);
        this.#changed();
      });
      return { kind, informer };
    };
    this.#informers = [watch("ReplicaSet"), watch("DaemonSet")];
  }

  /** Lists and watches until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    // A sync with nothing to add calls no handler: readiness is looked at again once each is synced.
    for (const { informer } of this.#informers) {
      informer.waitForSync(signal).then(() => this.#changed(), () => {});
    }
    return Promise.all(this.#informers.map(({ informer }) => informer.run(signal))).then(() => {});
  }

  /** True once every kind was listed, or cannot be (then it is not watched). */
  get ready(): boolean {
    return this.#informers.every(({ kind, informer }) =>
      informer.hasSynced() || this.#blind.has(kind === "DaemonSet" ? DAEMON_SETS.plural : REPLICA_SETS.plural)
    );
  }

  /** The workloads running another CCM now. */
  acting(): OtherCcm[] {
    const wanted = new Set(this.#options.images);
    const out: OtherCcm[] = [];
    for (const { kind, informer } of this.#informers) {
      for (const w of informer.list()) {
        const image = w.images.find((i) => wanted.has(imageName(i)));
        if (!image || (w.wanted <= 0 && w.pods <= 0)) continue;
        const owner = w.metadata.owner;
        const named = kind === "ReplicaSet" && owner?.kind === "Deployment"
          ? { kind: "Deployment" as const, name: owner.name, uid: owner.uid }
          : { kind, name: w.metadata.name ?? "", uid: w.metadata.uid };
        out.push({ ...named, namespace: w.metadata.namespace ?? "", image, pods: w.pods });
      }
    }
    return out.sort((a, b) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`));
  }

  /** Why the CCM stands by (for `/readyz`), or `undefined`. */
  problem(): string | undefined {
    const others = this.acting();
    if (others.length === 0) return undefined;
    return `standing by while another cloud-controller-manager acts: ${others.map(describe).join("; ")}`;
  }

  /** Resolves once every kind was listed (or cannot be); rejects when `signal` aborts. */
  waitReady(signal: AbortSignal): Promise<void> {
    return this.#until(() => this.ready, signal);
  }

  /** Resolves once the guard is ready and no other CCM acts; rejects when `signal` aborts. */
  waitClear(signal: AbortSignal): Promise<void> {
    return this.#until(() => this.ready && this.acting().length === 0, signal);
  }

  /** A signal that aborts when another CCM starts to act (or `signal` aborts). */
  whileClear(signal: AbortSignal): AbortSignal {
    const controller = new AbortController();
    this.#until(() => this.acting().length > 0, signal).then(
      () =>
        controller.abort(
          new Error(`another cloud-controller-manager acts: ${this.acting().map(describe).join("; ")}`),
        ),
      (reason) => controller.abort(reason),
    );
    return controller.signal;
  }

  #until(condition: () => boolean, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(signal.reason);
      };
      const done = () => {
        this.#listeners.delete(check);
        signal.removeEventListener("abort", onAbort);
      };
      this.#listeners.add(check);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #changed(): void {
    const others = this.acting();
    if (others.length > 0 && !this.#standingBy) {
      this.#log.warning("{what}; deno-ccm acts once none of them has a pod", { what: this.problem() });
    } else if (others.length === 0 && this.#standingBy) {
      this.#log.info("no other cloud-controller-manager acts in {namespace} any more", {
        namespace: this.#options.namespace,
      });
    }
    this.#standingBy = others.length > 0;
    for (const other of others) {
      const key = `${other.kind}/${other.uid ?? other.name}`;
      if (this.#reported.has(key)) continue;
      this.#reported.add(key);
      const type = other.kind === "Deployment"
        ? DEPLOYMENTS
        : other.kind === "DaemonSet"
        ? DAEMON_SETS
        : REPLICA_SETS;
      this.#options.recorder?.event(
        type as ResourceType<unknown>,
        { metadata: { name: other.name, namespace: other.namespace, uid: other.uid } },
        "Warning",
        "OtherCloudControllerManager",
        `deno-ccm stands by while this runs ${other.image} (${other.pods} pods): two cloud-controller-managers ` +
          "would undo each other's work; scale it to 0 or remove it to let deno-ccm act",
      );
    }
    for (const listener of [...this.#listeners]) listener();
  }
}

function describe(o: OtherCcm): string {
  return `${o.kind} ${o.namespace}/${o.name} runs ${o.image} (${o.pods} ${o.pods === 1 ? "pod" : "pods"})`;
}
