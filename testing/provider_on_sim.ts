/**
 * The Hetzner provider configured against a test simulator, as the CCM builds it: the simulator's
 * endpoint and token, the given environment, initialized with a cluster identity.
 *
 * @module
 */
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { HcloudProvider, readHcloudConfig } from "../providers/hcloud/mod.ts";
import { Registry } from "../lib/metrics.ts";
import type { TestSim } from "./sim_harness.ts";
import type { ClusterView } from "../providers/provider.ts";

/** A provider on `t`'s simulator; throws on a configuration error. */
export async function providerOnSim(
  t: TestSim,
  env: Record<string, string> = {},
  clusterId?: string | ClusterView,
  registry = new Registry(),
): Promise<HcloudProvider> {
  const { config, errors } = await readHcloudConfig({
    HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
    HCLOUD_ENDPOINT: t.sim.endpoint,
    ...env,
  });
  if (errors.length) throw new Error(errors.join("; "));
  const provider = new HcloudProvider(config, registry);
  const view = typeof clusterId === "string" ? { clusterId } : clusterId ?? {};
  await provider.initialize(view, AbortSignal.timeout(5_000));
  return provider;
}
