/**
 * The simulator driven by hcloud-go (the library of the hcloud CLI, the Terraform provider and the
 * official CCM, at the version the official CCM pins) through hack/hcloud_go_check: every check
 * passes and every response validates against the OpenAPI spec.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { buildGoProgram } from "../testing/go_program.ts";

Deno.test("hcloud-go against the simulator: every check passes, every response matches the spec", async () => {
  const binary = await buildGoProgram("hcloud_go_check");
  const t = await startTestSim({ actionDurationMs: 20 });
  try {
    const run = await new Deno.Command(binary, {
      env: { HCLOUD_ENDPOINT: t.sim.endpoint, HCLOUD_TOKEN: DEFAULT_SIM_TOKEN },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(run.stdout).trim().split("\n").map((l) => JSON.parse(l));
    const failed = lines.filter((l) => l.check && !l.ok).map((l) => `${l.check}: ${l.error}`);
    assertEquals(failed, [], new TextDecoder().decode(run.stderr));
    const summary = lines.find((l) => l.summary);
    assert(run.success && summary?.failed === 0, JSON.stringify(summary));
    assert(lines.filter((l) => l.check).length >= 16, "every check ran");
    const routes = new Set(t.sim.audit.map((e) => e.route));
    const spec = JSON.parse(
      await Deno.readTextFile(new URL("../hcloud_api/openapi.json", import.meta.url)),
    );
    const operations = Object.values(spec.paths as Record<string, object>)
      .reduce(
        (n, item) => n + Object.keys(item).filter((k) => ["get", "post", "put", "delete"].includes(k)).length,
        0,
      );
    console.log(
      `hcloud-go check: ${lines.filter((l) => l.check).length} checks, ${summary.calls} calls, ` +
        `${routes.size} of the spec's ${operations} operations exercised`,
    );
  } finally {
    await t.finish();
  }
});
