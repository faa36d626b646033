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
import { InformerFactory } from "../kube/informer_factory.ts";
import { SERVICES } from "../kube/resources.ts";
import { type Flags, parseFlags } from "../config/flags.ts";
import { Registry } from "../lib/metrics.ts";
import { Conditions } from "../lib/conditions.ts";
import { seededRandom, seedProcessRandom } from "../lib/random.ts";
import {
  CONTROLLER_FACTORIES,
  type ControllerName,
  INFORMER_TRANSFORMS,
  makeRecorderFactory,
  runControllers,
} from "../controllers/mod.ts";
import { HcloudProvider, readHcloudConfig } from "../providers/hcloud/mod.ts";

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

/** A running CCM: stop it as a crash would. */
interface Instance {
  readonly n: number;
  readonly stop: AbortController;
  readonly running: Promise<void>;
  readonly provider: HcloudProvider;
  readonly registry: Registry;
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
  #instance?: Instance;
  #started = 0;
  /** Each CCM stopped so far: whether its work has ended. */
  readonly #ended = new Map<number, () => boolean>();

  /**
   * A world from `seed` (the network `k8s` exists; nothing else). `drain`: balancers keep a leaving
   * Node until their health checks have failed it (`HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS`); `env`: more
   * of the provider's settings.
   */
  constructor(
    readonly seed: number,
    readonly options: { drain?: boolean; env?: Record<string, string> } = {},
  ) {
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

  /** Whether a CCM runs now. */
  get running(): boolean {
    return this.#instance !== undefined && !this.#instance.stop.signal.aborted;
  }

  /** Starts a CCM when none runs (the first, or a fresh one after a crash). */
  async ensureRunning(): Promise<void> {
    if (this.running) return;
    // A crashed process waits for nothing: the next starts at once. Whether the stopped one's work
    // ended (as it must once time moves) is judged at the close.
    if (this.#instance) this.#watchEnd(this.#instance);
    this.#instance = await this.#start(++this.#started);
    await this.clock.settle();
  }

  /** A gauge of the running CCM (0 when none runs or it never set it). */
  gauge(name: string): number {
    return this.#instance?.registry.gauge(name, "").get() ?? 0;
  }

  /** Stops the CCM as a crash would: nothing it has in flight reaches the cloud or the apiserver. */
  crash(): void {
    const instance = this.#instance;
    if (!instance || instance.stop.signal.aborted) return;
    this.crashes++;
    instance.stop.abort(new Error("crashed"));
  }

  /**
   * Stops everything (the end of a run). Every CCM stopped must have ended its work within a
   * minute of its stop (a loop outliving its signal would go on writing in a process that only
   * lost its lease): one that did not is named in {@link ExploreCluster.stuck}.
   */
  async close(): Promise<void> {
    const instance = this.#instance;
    if (instance) {
      instance.stop.abort(new Error("run over"));
      this.#watchEnd(instance);
    }
    await this.clock.advance(STOP_GRACE_MS);
    for (const [n, ended] of this.#ended) {
      if (!ended()) this.stuck.push(`CCM ${n} still running a minute after its stop`);
    }
    this.apiserver.close();
  }

  #watchEnd(instance: Instance): void {
    if (this.#ended.has(instance.n)) return;
    let ended = false;
    void instance.running.then(() => ended = true, () => ended = true);
    this.#ended.set(instance.n, () => ended);
  }

  /** The cloud call of the running CCM, through the crash points. */
  #cloudFetch(n: number): (request: Request) => Promise<Response> {
    return (request) =>
      this.clock.track((async () => {
        const mine = this.#instance?.n === n && !this.#instance.stop.signal.aborted;
        if (!mine) throw new TypeError("connection reset (the process is gone)");
        if (request.method === "GET") return await this.sim.handle(request);
        const path = new URL(request.url).pathname.slice(3).replace(/\/\d+/g, "/{id}");
        return await this.#write("cloud", `${request.method} ${path}`, () => this.sim.handle(request));
      })());
  }

  /** The Kubernetes transport of CCM `n`: dead once it crashed. */
  #kubeTransport(stop: AbortSignal): KubeTransport {
    return {
      send: async (request: KubeRequest) => {
        if (stop.aborted) throw new TypeError("connection reset (the process is gone)");
        if (request.method === "GET") {
          const signal = request.signal ? AbortSignal.any([request.signal, stop]) : stop;
          return await this.apiserver.send({ ...request, signal });
        }
        // Events are not state: a crash around one teaches nothing and would double the sweep.
        if (request.path.includes("/events")) return await this.apiserver.send(request);
        return await this.#write(
          "kube",
          `${request.method} ${request.path}`,
          () => this.apiserver.send(request),
        );
      },
      close: () => {},
    };
  }

  /** One write of the CCM, recorded and sent through the crash point {@link onWrite} chooses. */
  async #write(kind: WriteSeen["kind"], route: string, send: () => Promise<Response>): Promise<Response> {
    const write: WriteSeen = { kind, route, index: this.writes.length };
    this.writes.push(write);
    const mode = this.onWrite?.(write);
    if (mode === "before-answer") this.crash();
    const answer = await send();
    if (mode === "answer-lost" || mode === "before-answer") {
      await answer.body?.cancel();
      throw new TypeError("connection reset by peer (the answer was lost)");
    }
    if (mode === "after-answer") queueMicrotask(() => this.crash());
    return answer;
  }

  async #start(n: number): Promise<Instance> {
    const stop = new AbortController();
    const { config, errors } = await readHcloudConfig({
      ...ENV,
      ...(this.options.drain ? { HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS: "true" } : {}),
      ...this.options.env,
    });
    if (errors.length) throw new Error(errors.join("; "));
    const registry = new Registry();
    const provider = new HcloudProvider(config, registry, "deno-ccm", {
      clock: this.clock,
      fetch: this.#cloudFetch(n),
    });
    const { flags, errors: flagErrors } = parseFlags(ARGS);
    if (flagErrors.length) throw new Error(flagErrors.join("; "));
    const client = new KubeClient(this.#kubeTransport(stop.signal));
    const informers = new InformerFactory(client, { clock: this.clock }, INFORMER_TRANSFORMS);
    const instance: Instance = { n, stop, provider, registry, running: Promise.resolve() };
    this.#instance = instance;
    await provider.initialize!({
      clusterId: CLUSTER_ID,
      services: () => informers.for(SERVICES).list(),
    }, stop.signal);
    provider.fence(stop.signal);
    const ctx = {
      client,
      informers,
      provider,
      flags: flags as Flags,
      metrics: registry,
      recorder: makeRecorderFactory(client, `ccm-${n}`, () => this.clock.now()).recorder,
      conditions: new Conditions(),
      clock: this.clock,
    };
    return {
      ...instance,
      running: runControllers(ctx, new Set(ENABLED), CONTROLLER_FACTORIES, stop.signal, () => {}),
    };
  }
}
