/**
 * Builds the provider named by `--cloud-provider` from the environment, collecting configuration
 * problems for the one startup error message.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import type { CloudProvider } from "./provider.ts";
import { HcloudProvider, readHcloudConfig } from "./hcloud/mod.ts";
import type { Flags } from "../config/flags.ts";
import type { ControllerName } from "../config/controllers_flag.ts";
import type { Registry } from "../lib/metrics.ts";
import { logger, registerSecret } from "../lib/log.ts";

/** Creates the provider or returns why it cannot be created. */
export async function createProvider(
  flags: Flags,
  enabled: Set<ControllerName>,
  env: Record<string, string | undefined>,
  registry: Registry,
): Promise<{ provider?: CloudProvider; errors: string[] }> {
  // "hetzner" is the Syself chart's name for the same provider.
  if (flags.cloudProvider !== "hcloud" && flags.cloudProvider !== "hetzner") {
    return { errors: [`--cloud-provider: unknown provider "${flags.cloudProvider}"`] };
  }
  const { config, errors, warnings } = await readHcloudConfig(env);
  // The Syself flag and variable say the same; either one set to false picks hcloud://bm-<n>.
  if (!flags.useHrobotProviderIdForBaremetal) config.robot.hrobotProviderIds = false;
  registerSecret(env.HCLOUD_TOKEN);
  registerSecret(config.token);
  const routesWanted = enabled.has("node-route-controller") && flags.configureCloudRoutes &&
    !!config.network &&
    config.networkRoutesEnabled;
  // As the official CCM: a network without a cluster CIDR serves InternalIPs only, routes are off.
  if (routesWanted && !flags.clusterCidr) {
    warnings.push(
      "routes are off: HCLOUD_NETWORK is set but --cluster-cidr is not (the network only provides InternalIPs); " +
        "set --cluster-cidr to route pod CIDRs through it",
    );
  }
  if (errors.length) return { errors };
  for (const w of warnings) logger("hcloud").warning(w);
  return {
    provider: new HcloudProvider(config, registry, `deno-ccm/${VERSION} (${instanceName()})`),
    errors: [],
  };
}

/** Host and process, so the cloud's audit logs tell instances apart. */
function instanceName(): string {
  let host = "unknown";
  try {
    host = Deno.hostname();
  } catch { /* no sys permission */ }
  return `${host}; pid ${Deno.pid}`;
}
