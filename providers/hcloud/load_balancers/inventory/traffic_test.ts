import { assertEquals } from "../../../../testing/assert.ts";
import { startTestSim } from "../../../../testing/sim_harness.ts";
import { Registry } from "../../../../lib/metrics.ts";
import { HcloudClient } from "../../../../hcloud_api/mod.ts";
import { DEFAULT_SIM_TOKEN } from "../../../../hcloud_sim/simulator.ts";
import { BalancerTraffic, TRAFFIC_BALANCERS_PER_PASS } from "./traffic.ts";

Deno.test("traffic: each pass reads at most its share of balancers in turn, one request each; a failed read keeps the last figures", async () => {
  const t = await startTestSim();
  try {
    const balancers: { id: number; name: string }[] = [];
    for (let i = 0; i < TRAFFIC_BALANCERS_PER_PASS + 5; i++) {
      const r = await t.api("POST", "/load_balancers", {
        name: `lb-${i}`,
        load_balancer_type: "lb11",
        location: "fsn1",
      });
      balancers.push({ id: r.body.load_balancer.id, name: r.body.load_balancer.name });
    }
    t.sim.world.lbTraffic.set(balancers[0].id, {
      open_connections: 12,
      requests_per_second: 3.5,
      "bandwidth.out": 2048,
    });
    const registry = new Registry();
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, maxRetries: 0 });
    const traffic = new BalancerTraffic(client, registry, () => Date.now());
    const reads = () => t.sim.audit.filter((e) => e.route === "GET /load_balancers/{id}/metrics").length;
    const series = (name: string) => registry.render().split("\n").filter((l) => l.startsWith(`${name}{`));

    await traffic.pass(balancers);
    assertEquals(reads(), TRAFFIC_BALANCERS_PER_PASS, "one request per balancer, at most the pass's share");
    assertEquals(series("hcloud_load_balancer_open_connections").length, TRAFFIC_BALANCERS_PER_PASS);
    assertEquals(
      series("hcloud_load_balancer_open_connections")[0],
      'hcloud_load_balancer_open_connections{load_balancer="lb-0"} 12',
    );
    assertEquals(
      series("hcloud_load_balancer_requests_per_second")[0],
      'hcloud_load_balancer_requests_per_second{load_balancer="lb-0"} 3.5',
    );
    assertEquals(series("hcloud_load_balancer_bandwidth_out_bytes_per_second")[0].endsWith(" 2048"), true);

    // The next pass takes the rest first, then wraps; every balancer has figures now.
    t.sim.world.lbTraffic.set(balancers[0].id, { open_connections: 99 });
    // The pass reads balancers 30 to 34 first, then lb-0: its read is the sixth, and fails.
    t.sim.faults.rules.push({
      match: "^GET /load_balancers/\\{id\\}/metrics$",
      status: 500,
      code: "server_error",
      skip: 5,
      count: 1,
    });
    await traffic.pass(balancers);
    assertEquals(reads(), 2 * TRAFFIC_BALANCERS_PER_PASS);
    assertEquals(series("hcloud_load_balancer_open_connections").length, balancers.length);
    assertEquals(
      series("hcloud_load_balancer_open_connections").includes(
        'hcloud_load_balancer_open_connections{load_balancer="lb-0"} 12',
      ),
      true,
      "the failed read kept the last figures",
    );

    // A balancer gone takes its series with it.
    await traffic.pass(balancers.slice(1));
    assertEquals(series("hcloud_load_balancer_open_connections").some((l) => l.includes('"lb-0"')), false);
  } finally {
    await t.finish();
  }
});

Deno.test("traffic: a figure that is no finite number is dropped, the others kept", async () => {
  const t = await startTestSim();
  try {
    const r = await t.api("POST", "/load_balancers", {
      name: "web",
      load_balancer_type: "lb11",
      location: "fsn1",
    });
    const lb = { id: r.body.load_balancer.id, name: r.body.load_balancer.name };
    t.sim.world.lbTraffic.set(lb.id, {
      open_connections: NaN,
      requests_per_second: Infinity,
      "bandwidth.in": 5,
    });
    const registry = new Registry();
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, maxRetries: 0 });
    await new BalancerTraffic(client, registry, () => Date.now()).pass([lb]);
    const series = registry.render().split("\n").filter((l) =>
      l.startsWith("hcloud_load_balancer_") && l.includes("{")
    );
    assertEquals(series, [
      'hcloud_load_balancer_connections_per_second{load_balancer="web"} 0',
      'hcloud_load_balancer_bandwidth_in_bytes_per_second{load_balancer="web"} 5',
      'hcloud_load_balancer_bandwidth_out_bytes_per_second{load_balancer="web"} 0',
    ]);
  } finally {
    await t.finish();
  }
});
