/**
 * The simulator's Robot webservice driven by hrobot-go (the library the official CCM reads dedicated
 * servers with, at the version it pins) through hack/hrobot_go_check: server list and get, reset
 * state and power, rename, Robot's error envelope for unknown servers and wrong credentials, and
 * the server list's hourly limit.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { ROBOT_LIMITS } from "../hcloud_sim/robot.ts";
import { buildGoProgram } from "../testing/go_program.ts";

Deno.test("hrobot-go against the simulator's Robot webservice: every check passes", async () => {
  const binary = await buildGoProgram("hrobot_go_check");
  const t = await startTestSim();
  try {
    const robot = t.sim.robot;
    robot.limitScale = 0.05; // the list's 200/hour becomes 10, so the limit is reached quickly
    robot.add({ server_name: "check-1" });
    robot.add({ server_name: "check-v4only", server_ipv6_net: null });
    robot.add({ server_name: "check-off", power: "off" });
    const [user, password] = [...robot.credentials][0].split(":");
    const run = await new Deno.Command(binary, {
      env: {
        HETZNER_ENDPOINT: t.sim.robotEndpoint,
        ROBOT_USER: user,
        ROBOT_PASSWORD: password,
        ROBOT_LIST_LIMIT: String(Math.round(ROBOT_LIMITS["GET /server"] * robot.limitScale)),
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(run.stdout).trim().split("\n").map((l) => JSON.parse(l));
    const failed = lines.filter((l) => l.check && !l.ok).map((l) => `${l.check}: ${l.error}`);
    assertEquals(failed, [], new TextDecoder().decode(run.stderr));
    assert(run.success && lines.filter((l) => l.check).length === 8, "every check ran");
    assertEquals(robot.count("GET /server") > 0, true);
    console.log(
      `hrobot-go check: ${lines.filter((l) => l.check).length} checks, ${robot.audit.length} requests`,
    );
  } finally {
    await t.finish();
  }
});
