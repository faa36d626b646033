/**
 * One CCM process of an explored world, built as `app.ts` builds it: the Hetzner provider on the
 * world's clock and in-process fetch, initialized, then the controllers — at once, or (with leader
 * election) once its elector holds the lease, stopped when it loses it, as `app.ts` does. A process
 * that lost the lease has ended (the real one exits and its kubelet restarts it).
 *
 * @module
 */
import type { FakeClock } from "../testing/fake_clock.ts";
import { KubeClient, type KubeTransport } from "../kube/client.ts";
import { InformerFactory } from "../kube/informer_factory.ts";
import { LeaderElector } from "../kube/leader_election.ts";
import { fencedTransport } from "../kube/fenced.ts";
import { SERVICES } from "../kube/resources.ts";
import { type Flags, parseFlags } from "../config/flags.ts";
import { Registry } from "../lib/metrics.ts";
import { Conditions } from "../lib/conditions.ts";
import {
  CONTROLLER_FACTORIES,
  type ControllerName,
  INFORMER_TRANSFORMS,
  makeRecorderFactory,
  runControllers,
} from "../controllers/mod.ts";
import { HcloudProvider, readHcloudConfig } from "../providers/hcloud/mod.ts";

/** The lease the replicas contend for (the chart's). */
export const LEASE = { namespace: "kube-system", name: "cloud-controller-manager" };

/** A running CCM: stop it as a crash would. */
export interface Replica {
  readonly n: number;
  /** Its identity in the lease: `ccm-<n>`. */
  readonly identity: string;
  readonly stop: AbortController;
  /** Ends when its work has ended (stopped, or the lease lost). */
  readonly running: Promise<void>;
  readonly provider: HcloudProvider;
  readonly registry: Registry;
  /** Whether it runs its controllers now (always, without leader election). */
  leading(): boolean;
  /** Whether it ended on its own (the lease lost). */
  ended(): boolean;
}

/** What a replica is built from. */
export interface ReplicaParts {
  n: number;
  /** Aborted to stop it as a crash would. */
  stop: AbortController;
  clock: FakeClock;
  /** The provider's settings (environment variables). */
  env: Record<string, string>;
  args: string[];
  enabled: ControllerName[];
  clusterId: string;
  /** Its cloud fetch (through the world's crash points). */
  fetch: (request: Request) => Promise<Response>;
  /** Its Kubernetes transport (dead once it crashed). */
  transport: KubeTransport;
  /** Contend for {@link LEASE} before running the controllers. */
  leaderElection: boolean;
}

/** Starts replica `n`; resolves once its provider is initialized. */
export async function startReplica(p: ReplicaParts): Promise<Replica> {
  const stop = p.stop;
  const { config, errors } = await readHcloudConfig(p.env);
  if (errors.length) throw new Error(errors.join("; "));
  const registry = new Registry();
  const provider = new HcloudProvider(config, registry, "deno-ccm", { clock: p.clock, fetch: p.fetch });
  const { flags, errors: flagErrors } = parseFlags(p.args);
  if (flagErrors.length) throw new Error(flagErrors.join("; "));
  const client = new KubeClient(p.transport);
  let informers: InformerFactory | undefined;
  await provider.initialize!({
    clusterId: p.clusterId,
    services: () => informers?.for(SERVICES).list() ?? [],
  }, stop.signal);
  const identity = `ccm-${p.n}`;
  const recorder = makeRecorderFactory(client, identity, () => p.clock.now()).recorder;
  const controllers = (leading: AbortSignal) => {
    provider.fence(leading);
    const termClient = new KubeClient(fencedTransport(p.transport, leading));
    informers = new InformerFactory(termClient, { clock: p.clock }, INFORMER_TRANSFORMS);
    const ctx = {
      client: termClient,
      informers,
      provider,
      flags: flags as Flags,
      metrics: registry,
      recorder,
      conditions: new Conditions(),
      clock: p.clock,
    };
    return runControllers(ctx, new Set(p.enabled), CONTROLLER_FACTORIES, leading, () => {});
  };
  let lost = false;
  const base = { n: p.n, identity, stop, provider, registry };
  if (!p.leaderElection) {
    return {
      ...base,
      running: controllers(stop.signal),
      leading: () => !stop.signal.aborted,
      ended: () => false,
    };
  }
  const elector = new LeaderElector(client, { ...LEASE, identity, clock: p.clock, metrics: registry });
  let work: Promise<void> | undefined;
  const running = elector.run(stop.signal, { onStartedLeading: (leading) => work = controllers(leading) })
    .then(async (outcome) => {
      lost = outcome === "lost";
      await work;
    });
  return {
    ...base,
    running,
    leading: () => elector.isLeader() && !stop.signal.aborted,
    ended: () => lost,
  };
}
