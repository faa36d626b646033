/**
 * deno-ccm: a Kubernetes cloud-controller-manager for Hetzner Cloud.
 *
 * Reads flags (named like the upstream cloud-controller-manager) and the official Hetzner CCM's
 * `HCLOUD_*` variables, reports every configuration problem at once (exit code 2), then runs until
 * SIGTERM/SIGINT, which stops the workers, releases the leader lease and exits within 5 s.
 *
 * @module
 */
import { helpText, parseFlags } from "./config/flags.ts";
import { resolveControllers } from "./config/controllers_flag.ts";
import { ConfigError } from "./lib/config_error.ts";
import { resolveConnection } from "./kube/kubeconfig.ts";
import { createProvider } from "./providers/registry.ts";
import { CONTROLLER_FACTORIES, ipamPlan } from "./controllers/mod.ts";
import { runApp } from "./app.ts";
import { Registry } from "./lib/metrics.ts";
import { logger, redact, setupLogging } from "./lib/log.ts";
import { readEnv } from "./config/env.ts";
import { environmentNames, unknownEnvWarnings } from "./config/unknown_env.ts";
import { freshSeed, seedProcessRandom } from "./lib/random.ts";
import { VERSION } from "./version.ts";
import { residueCommand } from "./residue_command.ts";

/** Exit code for configuration errors, as Go's flag package uses. */
export const EXIT_CONFIG = 2;
/** How long an orderly stop may take before the process exits anyway. */
const STOP_DEADLINE_MS = 4_500;

/** Runs the CCM with `args` and `env`; resolves to the exit code. */
export async function main(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const { flags, errors, ignored } = parseFlags(args);
  if (flags.help) {
    console.log(helpText());
    return 0;
  }
  if (flags.version) {
    console.log(`deno-ccm ${VERSION}`);
    return 0;
  }
  const controllers = resolveControllers(flags.controllers);
  errors.push(...controllers.errors);
  if (controllers.enabled.has("node-ipam-controller") && flags.allocateNodeCidrs) {
    errors.push(...ipamPlan(flags).errors);
  }
  const registry = new Registry();
  const provider = await createProvider(flags, controllers.enabled, env, registry);
  errors.push(...provider.errors);
  let connection;
  try {
    connection = await resolveConnection({ kubeconfig: flags.kubeconfig, context: flags.context, env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    errors.push(...err.problems);
  }
  if (errors.length > 0 || !connection || !provider.provider) {
    const list = errors.map((e) => `  - ${redact(e)}`).join("\n");
    console.error(`deno-ccm: invalid configuration:\n${list}\nRun with --help for the flags.`);
    provider.provider?.close?.();
    return EXIT_CONFIG;
  }

  setupLogging({ level: flags.logLevel, format: flags.logFormat });
  if (flags.residue) {
    return await residueCommand(flags.residue as "list" | "remove", connection, provider.provider);
  }
  const log = logger("main");
  const stop = new AbortController();
  const onSignal = (name: string) => () => {
    if (stop.signal.aborted) return;
    log.info("{signal} received; stopping", { signal: name });
    stop.abort(new Error(`stopped by ${name}`));
    // Never outlive the deadline, whatever is still in flight.
    const timer = setTimeout(() => {
      log.warning("orderly stop took too long; exiting");
      Deno.exit(0);
    }, STOP_DEADLINE_MS);
    Deno.unrefTimer(timer);
  };
  for (const sig of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(sig, onSignal(sig));
  // What the process spreads at random (retry jitter, watch timeouts, event names) comes from one
  // seed, logged, so a run's choices can be told and replayed.
  const seed = freshSeed();
  seedProcessRandom(seed);
  log.debug("random seed {seed}", { seed });
  // A misspelled setting is never silent (review Q12); names only, never a value.
  for (const warning of unknownEnvWarnings(environmentNames(env))) log.warning("{warning}", { warning });
  if (ignored.length) {
    log.info("accepted without effect (upstream cloud-controller-manager flags): {flags}", {
      flags: ignored.join(" "),
    });
  }
  log.info("starting deno-ccm {version} with provider {provider}; controllers: {controllers}", {
    version: VERSION,
    provider: flags.cloudProvider,
    controllers: [...controllers.enabled].join(", "),
  });
  try {
    return await runApp({
      flags,
      enabled: controllers.enabled,
      connection,
      provider: provider.provider,
      factories: CONTROLLER_FACTORIES,
      registry,
    }, stop.signal);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(
        `deno-ccm: invalid configuration:\n${err.problems.map((p) => `  - ${redact(p)}`).join("\n")}`,
      );
      return EXIT_CONFIG;
    }
    log.error("fatal: {error}", { error: err instanceof Error ? err.message : String(err) });
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args, readEnv()));
}
