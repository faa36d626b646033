/**
 * The Syself chart (`syself/charts`, `ccm-hetzner` 2.0.6, what CAPH clusters run) kept, with our image
 * swapped in. That chart's container, as its template renders it with `privateNetwork.enabled`: the
 * command `/bin/hetzner-cloud-controller-manager` (our image answers to it) with `--cloud-provider=hcloud`,
 * `--leader-elect`, `--allow-untagged-cloud` and the pod range; `HCLOUD_DEBUG`,
 * `HCLOUD_LOAD_BALANCERS_ENABLED` and `HCLOUD_NETWORK` (from its Secret `hetzner`) in the environment;
 * every credential from that Secret mounted at `/etc/hetzner-secret`, and no `ROBOT_ENABLED` (its CCM
 * serves Robot whenever the mount holds both Robot credentials).
 *
 * What a CAPH user sees: the flags parse, the token comes from the mount, Robot is on, and a bare-metal
 * Node gets `hcloud://bm-<number>`, the form CAPH matches its Machines by.
 */
import { assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { parseFlags } from "../config/flags.ts";
import { HcloudProvider, readHcloudConfig } from "../providers/hcloud/mod.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { Registry } from "../lib/metrics.ts";

/** The chart's container command with `privateNetwork.enabled` and its default values. */
const COMMAND = [
  "/bin/hetzner-cloud-controller-manager",
  "--cloud-provider=hcloud",
  "--leader-elect=true",
  "--allow-untagged-cloud",
  "--allocate-node-cidrs=true",
  "--cluster-cidr=10.244.0.0/16",
];

Deno.test("syself chart kept, our image in it: Robot on from its mount, bare-metal Nodes get hcloud://bm-<number>", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  const mount = await Deno.makeTempDir();
  try {
    // The Secret `hetzner` as CAPH writes it, mounted.
    await Deno.writeTextFile(`${mount}/hcloud`, DEFAULT_SIM_TOKEN);
    await Deno.writeTextFile(`${mount}/robot-user`, "robot-user");
    await Deno.writeTextFile(`${mount}/robot-password`, "robot-password");
    const { errors: flagErrors, flags } = parseFlags(COMMAND.slice(1));
    assertEquals(flagErrors, []);
    assertEquals([flags.cloudProvider, flags.leaderElect, flags.clusterCidr], [
      "hcloud",
      true,
      "10.244.0.0/16",
    ]);

    const { config, errors } = await readHcloudConfig({
      HCLOUD_DEBUG: "false",
      HCLOUD_LOAD_BALANCERS_ENABLED: "true",
      // The test's own: the simulator stands in for Hetzner (no network is set up here).
      HCLOUD_ENDPOINT: t.sim.endpoint,
      ROBOT_ENDPOINT: t.sim.robotEndpoint,
    }, mount);
    assertEquals(errors, []);
    assertEquals([config.token, config.robot.enabled, config.robot.hrobotProviderIds], [
      DEFAULT_SIM_TOKEN,
      true,
      false,
    ]);

    const bm = t.sim.robot.add({ server_name: "bm-7", product: "AX41-NVMe", dc: "FSN1-DC14" });
    const provider = new HcloudProvider(config, new Registry());
    await provider.initialize({ clusterId: "c" }, AbortSignal.timeout(5_000));
    const meta = await provider.instances!.instanceMetadata({
      metadata: { name: "bm-7", creationTimestamp: new Date().toISOString() },
    }, "initialize");
    assertEquals(meta?.providerID, `hcloud://bm-${bm.server_number}`);
  } finally {
    await Deno.remove(mount, { recursive: true });
    await t.finish();
  }
});

Deno.test("syself mount, hostile and mistaken inputs: a bad ROBOT_ENABLED is refused by name over the mount; an empty credential file turns nothing on; no credential is ever shown", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  const mount = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${mount}/hcloud`, DEFAULT_SIM_TOKEN);
    await Deno.writeTextFile(`${mount}/robot-user`, "secret-user-x");
    await Deno.writeTextFile(`${mount}/robot-password`, "secret-pass-y");
    const env = { HCLOUD_ENDPOINT: t.sim.endpoint, ROBOT_ENDPOINT: t.sim.robotEndpoint };
    // A value that is no boolean: refused naming variable and value, whatever the mount holds.
    const bad = await readHcloudConfig({ ...env, ROBOT_ENABLED: "yes please" }, mount);
    assertEquals(
      bad.errors.filter((e) => e.startsWith("ROBOT_ENABLED") && e.includes('"yes please"')).length,
      1,
    );
    assertEquals(bad.errors.some((e) => /secret-(user|pass)/.test(e)), false);
    // One credential empty (a Secret key left blank): not that chart's setup; Robot stays off.
    await Deno.writeTextFile(`${mount}/robot-password`, "\n");
    const half = await readHcloudConfig(env, mount);
    assertEquals(half.errors, []);
    assertEquals([half.config.robot.enabled, half.config.robot.user, half.config.robot.hrobotProviderIds], [
      false,
      undefined,
      true,
    ]);
  } finally {
    await Deno.remove(mount, { recursive: true });
    await t.finish();
  }
});
