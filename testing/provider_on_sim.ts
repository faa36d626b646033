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

/** A provider on `t`'s simulator; throws on a configuration error. */
export async function providerOnSim(
  t: TestSim,
  env: Record<string, string> = {},
  clusterId?: string,
  registry = new Registry(),
): Promise<HcloudProvider> {
  const { config, errors } = await readHcloudConfig({
    HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
    HCLOUD_ENDPOINT: t.sim.endpoint,
    ...env,
  });
  if (errors.length) throw new Error(errors.join("; "));
  const provider = new HcloudProvider(config, registry);
  await provider.initialize(clusterId ? { clusterId } : {}, AbortSignal.timeout(5_000));
  return provider;
}
