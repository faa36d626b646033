/**
 * The process lifecycle: health/metrics server, waiting for the apiserver and the cloud, leader
 * election, the controllers, and an orderly stop.
 *
 * @module
 */
import { KubeClient } from "./kube/client.ts";
import { KubeApiError } from "./kube/errors.ts";
import { InformerFactory } from "./kube/informer_factory.ts";
import type { ClusterConnection } from "./kube/kubeconfig.ts";
import { LeaderElector } from "./kube/leader_election.ts";
import { HttpTransport, type KubeTransport } from "./kube/transport.ts";
import { fencedTransport } from "./kube/fenced.ts";
import { OtherCcmGuard } from "./kube/other_ccm.ts";
import {
  type ControllerFactory,
  INFORMER_TRANSFORMS,
  makeRecorderFactory,
  runControllers,
} from "./controllers/mod.ts";
import type { ControllerName } from "./config/controllers_flag.ts";
import type { Flags } from "./config/flags.ts";
import type { CloudProvider, ClusterView } from "./providers/provider.ts";
import { NAMESPACES, SERVICES } from "./kube/resources.ts";
import { abortableSleep, backoffDelay } from "./lib/sleep.ts";
import { Registry } from "./lib/metrics.ts";
import { serveStatus } from "./lib/status_server.ts";
import { Conditions } from "./lib/conditions.ts";
import { SYSTEM_CLOCK } from "./lib/clock.ts";
import { logger, redact } from "./lib/log.ts";
import { processMetrics } from "./lib/process_metrics.ts";
import { ConfigError } from "./lib/config_error.ts";

/** Everything {@link runApp} needs, already validated. */
export interface AppOptions {
  flags: Flags;
  enabled: Set<ControllerName>;
  connection: ClusterConnection;
  provider: CloudProvider;
  factories: Partial<Record<ControllerName, ControllerFactory>>;
  registry?: Registry;
}

/** Runs until `signal` aborts (exit code 0) or leadership is lost (exit code 1). */
export async function runApp(options: AppOptions, signal: AbortSignal): Promise<number> {
  const log = logger("app");
  const { flags } = options;
  const registry = options.registry ?? new Registry();
  processMetrics(registry);
  const transport: KubeTransport = new HttpTransport(options.connection, {
    qps: flags.kubeApiQps,
    burst: flags.kubeApiBurst,
    metrics: registry,
    userAgent: `deno-ccm/${flags.cloudProvider}`,
  });
  const client = new KubeClient(transport, "deno-ccm");
  const state: {
    apiserver: boolean;
    cloud: boolean;
    synced: boolean;
    leading: boolean;
    apiserverProblem?: string;
    cloudProblem?: string;
  } = { apiserver: false, cloud: false, synced: false, leading: false };
  // In a pod the lease stays the lock even with --leader-elect=false: a patch that turns it off while
  // two replicas run (kube-hetzner's kustomize patch over a two-replica manifest) would make both act.
  const elect = flags.leaderElect || options.connection.source === "in-cluster";
  if (elect && !flags.leaderElect) {
    log.warning(
      "--leader-elect=false: in a cluster the lease {ns}/{name} is still taken, so two replicas never both act",
      { ns: flags.leaderElectResourceNamespace, name: flags.leaderElectResourceName },
    );
  }
  const elector = elect
    ? new LeaderElector(client, {
      namespace: flags.leaderElectResourceNamespace,
      name: flags.leaderElectResourceName,
      leaseDurationMs: flags.leaderElectLeaseDuration,
      renewDeadlineMs: flags.leaderElectRenewDeadline,
      retryPeriodMs: flags.leaderElectRetryPeriod,
      metrics: registry,
    })
    : undefined;

  const conditions = new Conditions();
  let guard: OtherCcmGuard | undefined;
  const tls = flags.securePort > 0 && flags.tlsCertFile
    ? {
      cert: await Deno.readTextFile(flags.tlsCertFile),
      key: await Deno.readTextFile(flags.tlsPrivateKeyFile),
    }
    : undefined;
  const serverStop = new AbortController();
  const server = flags.securePort > 0
    ? listenOrExplain(flags.bindAddress, flags.securePort, "--bind-address/--secure-port", () =>
      serveStatus({
        hostname: flags.bindAddress,
        port: flags.securePort,
        registry,
        tls,
        signal: serverStop.signal,
        onListen: (addr) => {
          log.info("serving /healthz, /readyz and /metrics on {host}:{port}", {
            host: addr.hostname,
            port: addr.port,
          });
        },
        health: [{ name: "ping", check: () => undefined }],
        ready: [
          {
            name: "kube-apiserver",
            check: () => state.apiserver ? undefined : state.apiserverProblem ?? "not reached yet",
          },
          {
            name: "cloud",
            check: () =>
              state.cloud
                ? options.provider.problem?.()
                : state.cloudProblem ?? options.provider.problem?.() ?? "provider not initialized yet",
          },
          { name: "other-ccm", check: () => guard?.problem() },
          {
            name: "leader-election",
            check: () => !elector || elector.leaderKnown ? undefined : "lease not read yet",
          },
          { name: "controllers", check: () => conditions.problem() },
          {
            name: "informer-sync",
            check: () => !state.leading || state.synced ? undefined : "caches not synced yet",
          },
        ],
      }))
    : undefined;

  // The official CCM's metrics port: a port someone else holds is logged, not fatal (as there).
  let metricsServer: Deno.HttpServer<Deno.NetAddr> | undefined;
  const extra = options.provider.metricsAddress;
  if (extra) {
    try {
      metricsServer = serveStatus({
        hostname: extra.hostname,
        port: extra.port,
        registry,
        signal: serverStop.signal,
        health: [],
        ready: [],
        onListen: (addr) =>
          log.info("serving /metrics on {host}:{port} (HCLOUD_METRICS_ADDRESS)", {
            host: addr.hostname,
            port: addr.port,
          }),
      });
    } catch (err) {
      log.error("cannot serve /metrics on {host}:{port} (HCLOUD_METRICS_ADDRESS): {error}", {
        host: extra.hostname,
        port: extra.port,
        error: (err as Error).message,
      });
    }
  }

  // Events get their own client-side bucket (as upstream's event broadcaster): they must never
  // queue ahead of the writes that initialize Nodes.
  const eventTransport = new HttpTransport(options.connection, {
    qps: flags.kubeApiQps,
    burst: flags.kubeApiBurst,
    metrics: registry,
    userAgent: `deno-ccm/${flags.cloudProvider}`,
  });
  const { recorder, flushRecorders } = makeRecorderFactory(
    new KubeClient(eventTransport),
    elector?.identity ?? hostname(),
    () => SYSTEM_CLOCK.now(),
  );
  let exitCode = 0;
  try {
    await retryUntil(signal, "reach the Kubernetes API", async () => {
      const res = await transport.send({ method: "GET", path: "/version", verb: "get", signal });
      await res.body?.cancel();
      // Any HTTP answer proves reachability; a 401/403 here means bad credentials, worth retrying loudly.
      if (res.status === 401 || res.status === 403) {
        throw new Error(`credentials rejected (HTTP ${res.status})`);
      }
    }, (message) => state.apiserverProblem = message);
    state.apiserver = true;
    // The provider's view of the cluster: its identity, and the Services of the current
    // leadership term's informer (the service controller lists them before it calls the provider).
    let informers: InformerFactory | undefined;
    const cluster: ClusterView = {
      clusterId: options.provider.loadBalancers ? await readClusterId(client, signal) : undefined,
      services: () => informers?.for(SERVICES).list() ?? [],
    };
    if (options.provider.initialize) {
      await retryUntil(
        signal,
        `initialize the ${options.provider.name} provider`,
        (s) => options.provider.initialize!(cluster, s),
        (message) => state.cloudProblem = message,
      );
    }
    state.cloud = true;

    const startControllers = (leading: AbortSignal) => {
      state.leading = true;
      options.provider.fence?.(leading);
      // Fenced as the provider is: nothing this term sent lands once it is over (kube/fenced.ts).
      const termClient = new KubeClient(fencedTransport(transport, leading), "deno-ccm");
      informers = new InformerFactory(termClient, {}, INFORMER_TRANSFORMS);
      const ctx = {
        client: termClient,
        informers,
        provider: options.provider,
        flags,
        metrics: registry,
        recorder,
        conditions,
        clock: SYSTEM_CLOCK,
      };
      return runControllers(ctx, options.enabled, options.factories, leading, () => state.synced = true);
    };
    // Another CCM acting beside ours (an installer put the official one back, perhaps without leader
    // election): ours takes no lease and runs nothing until it is gone, and steps down when it comes.
    guard = flags.otherCcmImages.length > 0
      ? new OtherCcmGuard(client, {
        namespace: flags.otherCcmNamespace,
        images: flags.otherCcmImages,
        recorder: recorder("cloud-controller-manager"),
      })
      : undefined;
    const guardStop = new AbortController();
    const stopGuard = () => guardStop.abort();
    signal.addEventListener("abort", stopGuard, { once: true });
    const watching = guard?.run(guardStop.signal);
    while (!signal.aborted) {
      if (guard) {
        try {
          await guard.waitClear(signal);
        } catch {
          break; // stopped while standing by
        }
      }
      const term = guard ? guard.whileClear(signal) : signal;
      if (elector) {
        let running: Promise<void> | undefined;
        const outcome = await elector.run(term, {
          onStartedLeading: (leading) => running = startControllers(leading),
        });
        await running;
        if (outcome === "lost") {
          exitCode = 1;
          break;
        }
      } else {
        await startControllers(term);
      }
      state.leading = false;
      state.synced = false;
      // Only a term another CCM ended starts another pass. One that ended by itself (no controller to
      // run, say) ends the run as before: looping on it would never yield to the event loop.
      if (!guard || !term.aborted || signal.aborted) break;
    }
    signal.removeEventListener("abort", stopGuard);
    guardStop.abort();
    await watching;
  } catch (err) {
    if (!signal.aborted) throw err;
  } finally {
    await flushRecorders().catch(() => {});
    serverStop.abort();
    await server?.finished;
    await metricsServer?.finished;
    options.provider.close?.();
    transport.close();
    eventTransport.close();
  }
  return exitCode;
}

/**
 * The cluster's identity (the kube-system namespace's UID), which tags the balancers this cluster
 * creates. A transient failure (an apiserver that answers /version but not yet the rest, after a
 * restart) is retried; one that waiting cannot heal (RBAC, say) leaves nothing tagged, so orphaned
 * balancers are never swept, and says so.
 */
async function readClusterId(client: KubeClient, signal: AbortSignal): Promise<string | undefined> {
  let uid: string | undefined;
  await retryUntil(signal, "read the kube-system namespace UID", async (s) => {
    try {
      uid = (await client.get(NAMESPACES, "kube-system", { signal: s })).metadata?.uid;
    } catch (err) {
      if (!(err instanceof KubeApiError) || ![401, 403, 404].includes(err.status)) throw err;
      logger("app").warning(
        "cannot read the kube-system namespace UID, so orphaned load balancers are not swept: {error}",
        { error: err.message },
      );
    }
  });
  return uid;
}

/** Retries `attempt` with jittered backoff (1 s to 30 s), logging each failure, until it works or `signal` aborts. */
async function retryUntil(
  signal: AbortSignal,
  what: string,
  attempt: (s: AbortSignal) => Promise<void>,
  onError?: (message: string) => void,
): Promise<void> {
  const log = logger("app");
  for (let failures = 0; !signal.aborted; failures++) {
    try {
      await attempt(signal);
      if (failures > 0) log.info("now able to {what}", { what });
      return;
    } catch (err) {
      if (signal.aborted) break;
      // Bad configuration does not heal by waiting (a rejected token, say): stop with its message.
      if (err instanceof ConfigError) throw err;
      onError?.(`cannot ${what}: ${redact(err instanceof Error ? err.message : String(err))}`);
      const delay = backoffDelay(failures, { baseMs: 1_000, maxMs: 30_000, jitter: 0.5 });
      log.warning("cannot {what}: {error}; retrying in {seconds} s", {
        what,
        error: err instanceof Error ? err.message : String(err),
        seconds: Math.round(delay / 100) / 10,
      });
      await abortableSleep(delay, signal).catch(() => {});
    }
  }
  signal.throwIfAborted();
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "deno-ccm";
  }
}

/** Runs `listen`; a port that cannot be had is a configuration error naming the address and flags. */
function listenOrExplain<T>(host: string, port: number, flags: string, listen: () => T): T {
  try {
    return listen();
  } catch (err) {
    throw new ConfigError(`${flags}: cannot listen on ${host}:${port}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
