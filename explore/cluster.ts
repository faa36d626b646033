/**
 * One explored world in one process, driven by one seed: the simulator (called in-process, no
 * socket), the in-memory apiserver, one fake clock for both and for the CCM, and the CCM itself —
 * the Node, Node lifecycle, Service and Route controllers over the real Hetzner provider, built as
 * `app.ts` builds them. The CCM can be stopped between any two of its requests (a crash: its
 * signal aborts, its provider is fenced, its Kubernetes client answers nothing more) and a fresh one
 * started on the same apiserver and simulator.
 *
 * Every cloud write and Kubernetes write of the CCM passes {@link ExploreCluster.onWrite}, which may
 * crash the CCM before the answer, lose the answer, or crash it right after: the crash points of
 * Sieve's intermediate states.
 *
 * @module
 */
import { DEFAULT_SIM_TOKEN, Simulator } from "../hcloud_sim/simulator.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { MemoryApiserver } from "../testing/memory_apiserver.ts";
import { FakeClock } from "../testing/fake_clock.ts";
import { KubeClient, type KubeRequest, type KubeTransport } from "../kube/client.ts";
import { seededRandom, seedProcessRandom } from "../lib/random.ts";
import type { ControllerName } from "../controllers/mod.ts";
import { LEASE, type Replica, startReplica } from "./replica.ts";

/** Where the CCM is stopped around one of its writes. */
export type CrashMode = "before-answer" | "answer-lost" | "after-answer";

/** One write of the CCM: a cloud request or a Kubernetes one. */
export interface WriteSeen {
  /** `cloud` or `kube`. */
  kind: "cloud" | "kube";
  /** `POST /load_balancers` (the simulator's route) or `PATCH /api/v1/nodes/n1`. */
  route: string;
  /** Its place among all writes of the run, from 0. */
  index: number;
}

/** The cluster's identity (the kube-system namespace's UID in a real cluster). */
export const CLUSTER_ID = "7b0d0c3e-0000-4000-8000-0000000e4910";
/** Where the provider believes the API is; calls never leave the process. */
const ENDPOINT = "http://hcloud.explore.invalid/v1";
/** How long a stopped CCM's work may take to end (simulated time). */
const STOP_GRACE_MS = 60_000;
/** The controllers an explored CCM runs. */
const ENABLED: ControllerName[] = [
  "cloud-node-controller",
  "cloud-node-lifecycle-controller",
  "service-lb-controller",
  "node-route-controller",
];
/** The flags of an explored CCM (a 16-bit pod network: routes for every Node). */
const ARGS = [
  "--leader-elect=false",
  "--cluster-cidr=10.244.0.0/16",
  "--allocate-node-cidrs=false",
  "--route-reconciliation-period=30s", // as the chart ships it
];
/** The Cloud Firewall whose rules for the balancers the CCM keeps. */
export const FIREWALL = "k8s-balancers";
/** Its environment: the network `k8s`, balancers in nbg1 attached to it, their firewall kept. */
const ENV = {
  HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
  HCLOUD_ENDPOINT: ENDPOINT,
  HCLOUD_NETWORK: "k8s",
  HCLOUD_LOAD_BALANCERS_LOCATION: "nbg1",
  HCLOUD_LOAD_BALANCERS_FIREWALL: FIREWALL,
  HCLOUD_METRICS_ENABLED: "false",
};

/** Settings of an explored world. */
export interface WorldOptions {
  /** Balancers keep a leaving Node until their health checks have failed it. */
  drain?: boolean;
  /** More of the provider's settings. */
  env?: Record<string, string>;
  /** Two CCM replicas contending for the lease (default one, without leader election). */
  replicas?: 1 | 2;
}

/** See the module doc. */
export class ExploreCluster {
  readonly clock: FakeClock;
  readonly sim: Simulator;
  readonly apiserver = new MemoryApiserver();
  /** What users and kubelets write with (never crashed). */
  readonly client: KubeClient;
  /** The world's randomness (workload and faults), from the seed. */
  readonly random: () => number;
  /** Every write of the CCM so far, in order. */
  readonly writes: WriteSeen[] = [];
  /** Decides, per write, whether the CCM crashes around it (a crash-point sweep sets it). */
  onWrite?: (write: WriteSeen) => CrashMode | undefined;
  /** Crashes so far (each followed by a restart at the next {@link ExploreCluster.ensureRunning}). */
  crashes = 0;
  /** Names of windows reached (a crash between a create and its status write, …), with counts. */
  readonly windows = new Map<string, number>();
  /** What did not end when the CCM was stopped (a violation: see schedule.ts). */
  readonly stuck: string[] = [];
  /** Another cluster's balancer in the project (see invariants.ts), never to be touched. */
  foreignBalancer = 0;
  /** Writes made by a replica that did not hold the lease when it made them (two leaders writing). */
  readonly leaderless: string[] = [];
  /** The replicas alive now, by number. */
  readonly #live = new Map<number, Replica>();
  /** What stops each replica started (a crash aborts it). */
  readonly #stops = new Map<number, AbortController>();
  /** Replicas cut off from the apiserver, with what ends the partition. */
  readonly #partitioned = new Map<number, { heal: Promise<void>; end: () => void }>();
  #started = 0;
  /** Each CCM stopped so far: whether its work has ended. */
  readonly #ended = new Map<number, () => boolean>();

  /** A world from `seed` (the network `k8s` exists; nothing else). */
  constructor(readonly seed: number, readonly options: WorldOptions = {}) {
    // One seed: the product's own draws (jitter, event names) and the world's.
    seedProcessRandom(seed);
    this.random = seededRandom(seed ^ 0x5eed);
    this.clock = new FakeClock(Date.UTC(2026, 10, 29), { inProcess: true });
    this.sim = new Simulator({ quiet: true, actionDurationMs: 0, random: seededRandom(seed ^ 0xfa17) });
    this.sim.world.now = () => this.clock.now();
    this.apiserver.now = () => this.clock.now();
    this.apiserver.later = (fn, ms) => void this.clock.setTimeout(fn, ms);
    this.client = new KubeClient(this.apiserver);
    applySeed(this.sim, {
      networks: [{
        name: "k8s",
        ip_range: "10.0.0.0/8",
        subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
      }],
    });
  }

  /** Counts a window reached. */
  reached(window: string): void {
    this.windows.set(window, (this.windows.get(window) ?? 0) + 1);
  }

  /** Whether every replica runs now. */
  get running(): boolean {
    this.#reap();
    return this.#live.size === (this.options.replicas ?? 1);
  }

  /** Starts the replicas that do not run (at first, or fresh ones after a crash or a lost lease). */
  async ensureRunning(): Promise<void> {
    // A crashed process waits for nothing: the next starts at once. Whether the stopped one's work
    // ended (as it must once time moves) is judged at the close.
    while (!this.running) {
      const n = ++this.#started;
      const stop = new AbortController();
      this.#stops.set(n, stop);
      const replica = await startReplica({
        n,
        stop,
        clock: this.clock,
        env: {
          ...ENV,
          ...(this.options.drain ? { HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS: "true" } : {}),
          ...this.options.env,
        },
        args: ARGS,
        enabled: ENABLED,
        clusterId: CLUSTER_ID,
        fetch: this.#cloudFetch(n, stop.signal),
        transport: this.#kubeTransport(n, stop.signal),
        leaderElection: (this.options.replicas ?? 1) > 1,
      });
      this.#live.set(n, replica);
      // What it started settles before the next replica starts: two starts running side by side
      // would interleave by the machine's speed (seeds 11 and 15 of workload 5 did not replay).
      await this.clock.settle();
    }
  }

  /** A gauge of the leading replica (0 when none leads or it never set it). */
  gauge(name: string): number {
    return this.#leader()?.registry.gauge(name, "").get() ?? 0;
  }

  /**
   * Stops a replica as a crash would (the one numbered `n`, else the leader): nothing it has in
   * flight reaches the cloud or the apiserver.
   */
  crash(n?: number): void {
    const stop = this.#stops.get(n ?? this.#leader()?.n ?? this.#live.keys().next().value ?? -1);
    if (!stop || stop.signal.aborted) return;
    this.crashes++;
    stop.abort(new Error("crashed"));
    this.#reap();
  }

  /**
   * Cuts the leader off from the apiserver for `ms` (its requests hang, as behind a broken network);
   * it still reaches the cloud. Returns its number (undefined: no leader).
   */
  partition(ms: number): number | undefined {
    const leader = this.#leader();
    if (!leader || this.#partitioned.has(leader.n)) return undefined;
    let end = () => {};
    const heal = new Promise<void>((resolve) => end = resolve);
    this.#partitioned.set(leader.n, { heal, end });
    this.clock.setTimeout(() => {
      this.#partitioned.delete(leader.n);
      end();
    }, ms);
    return leader.n;
  }

  /** The replica that runs the controllers now. */
  #leader(): Replica | undefined {
    return [...this.#live.values()].find((r) => r.leading());
  }

  /** Forgets replicas that crashed or ended (lost the lease); their end is judged at the close. */
  #reap(): void {
    for (const [n, replica] of this.#live) {
      if (!replica.stop.signal.aborted && !replica.ended()) continue;
      if (replica.ended()) this.reached("leader deposed while cut off");
      this.#live.delete(n);
      this.#watchEnd(replica);
    }
  }

  /**
   * Stops everything (the end of a run). Every CCM stopped must have ended its work within a
   * minute of its stop (a loop outliving its signal would go on writing in a process that only
   * lost its lease): one that did not is named in {@link ExploreCluster.stuck}.
   */
  async close(): Promise<void> {
    for (const replica of this.#live.values()) {
      replica.stop.abort(new Error("run over"));
      this.#watchEnd(replica);
    }
    this.#live.clear();
    for (const p of this.#partitioned.values()) p.end();
    await this.clock.advance(STOP_GRACE_MS);
    for (const [n, ended] of this.#ended) {
      if (!ended()) this.stuck.push(`CCM ${n} still running a minute after its stop`);
    }
    this.apiserver.close();
  }

  #watchEnd(instance: Replica): void {
    if (this.#ended.has(instance.n)) return;
    let ended = false;
    void instance.running.then(() => ended = true, () => ended = true);
    this.#ended.set(instance.n, () => ended);
  }

  /** The cloud calls of replica `n`, through the crash points; none once it stopped. */
  #cloudFetch(n: number, stop: AbortSignal): (request: Request) => Promise<Response> {
    return (request) =>
      this.clock.track((async () => {
        if (stop.aborted) throw new TypeError("connection reset (the process is gone)");
        if (request.method === "GET") return await this.sim.handle(request);
        const path = new URL(request.url).pathname.slice(3).replace(/\/\d+/g, "/{id}");
        return await this.#write(n, "cloud", `${request.method} ${path}`, () => this.sim.handle(request));
      })());
  }

  /** The Kubernetes transport of replica `n`: dead once it stopped, hanging while partitioned. */
  #kubeTransport(n: number, stop: AbortSignal): KubeTransport {
    return {
      send: async (request: KubeRequest) => {
        const signal = request.signal ? AbortSignal.any([request.signal, stop]) : stop;
        const cut = this.#partitioned.get(n);
        if (cut) {
          // Behind a broken network a request neither arrives nor fails until it times out.
          await new Promise<void>((resolve, reject) => {
            void cut.heal.then(resolve);
            signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          });
        }
        if (stop.aborted) throw new TypeError("connection reset (the process is gone)");
        // Reads, events (not state) and the lease (a write every two seconds) pass no crash point.
        if (
          request.method === "GET" || request.path.includes("/events") || request.path.includes("/leases")
        ) {
          return await this.apiserver.send({ ...request, signal });
        }
        return await this.#write(
          n,
          "kube",
          `${request.method} ${request.path}`,
          () => this.apiserver.send(request),
        );
      },
      close: () => {},
    };
  }

  /** One write of replica `n`, recorded and sent through the crash point {@link onWrite} chooses. */
  async #write(
    n: number,
    kind: WriteSeen["kind"],
    route: string,
    send: () => Promise<Response>,
  ): Promise<Response> {
    const write: WriteSeen = { kind, route, index: this.writes.length };
    this.writes.push(write);
    if ((this.options.replicas ?? 1) > 1) {
      // Never two leaders writing: a replica writes only while the lease names it.
      const lease = this.apiserver.object<{ spec?: { holderIdentity?: string } }>(
        "leases",
        LEASE.name,
        LEASE.namespace,
      );
      const holder = lease?.spec?.holderIdentity;
      if (holder !== `ccm-${n}`) {
        this.leaderless.push(`ccm-${n} wrote ${route} while the lease named ${holder || "nobody"}`);
      }
    }
    const mode = this.onWrite?.(write);
    if (mode === "before-answer") this.crash(n);
    const answer = await send();
    if (mode === "answer-lost" || mode === "before-answer") {
      await answer.body?.cancel();
      throw new TypeError("connection reset by peer (the answer was lost)");
    }
    if (mode === "after-answer") queueMicrotask(() => this.crash(n));
    return answer;
  }
}
