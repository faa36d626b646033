/**
 * The churn scenario: 50 Nodes join and 50 leave while 50 Services exist: time until every balancer targets the new set, requests per node change.
 *
 * @module
 */
import type { ScenarioResult } from "./report.ts";
import type { benchEnvironment } from "./environment.ts";
import { createNodes, createServices, ingressCount, initTimes, waitFor } from "./bench_util.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES } from "../kube/resources.ts";

/** Runs the scenario in environments made by `environment(servers)`. */
export async function churn(
  environment: (servers: number) => ReturnType<typeof benchEnvironment>,
): Promise<ScenarioResult> {
  console.log("churn: 50 nodes join and 50 leave while 50 Services exist ...");
  const env = await environment(150);
  await createNodes(env.client, 100, 0);
  await initTimes(
    env.client,
    new Set(Array.from({ length: 100 }, (_, i) => `node-${i}`)),
    Date.now(),
    300_000,
    [],
  );
  await createServices(env.client, 50);
  await waitFor(async () => (await ingressCount(env.client)) === 50, 600_000, 500);
  const expected = (ids: number[]) =>
    [...env.sim.world.loadBalancers.values()].every((lb) =>
      JSON.stringify(targetServerIds(env.sim.world, lb)) === JSON.stringify(ids)
    );
  const serverId = (name: string) => [...env.sim.world.servers.values()].find((s) => s.name === name)?.id;
  const before = env.sim.audit.length;
  const series: [number, number][] = [];
  const start = Date.now();
  // 50 leave: their servers are deleted and the kubelets stop reporting; 50 new ones register.
  for (let i = 0; i < 50; i++) env.sim.control.vanishServer(serverId(`node-${i}`)!);
  await Promise.all(Array.from({ length: 50 }, (_, i) =>
    env.client.patch(NODES, `node-${i}`, "strategic", {
      status: {
        conditions: [{ type: "Ready", status: "False", reason: "KubeletStopped", message: "bench" }],
      },
    }, { subresource: "status" })));
  await createNodes(env.client, 50, 100);
  const want = Array.from({ length: 100 }, (_, i) => serverId(`node-${i + 50}`)!).sort((a, b) => a - b);
  await waitFor(
    () => {
      const right =
        [...env.sim.world.loadBalancers.values()].filter((lb) =>
          JSON.stringify(targetServerIds(env.sim.world, lb)) === JSON.stringify(want)
        ).length;
      series.push([(Date.now() - start) / 1000, right / 50]);
      return Promise.resolve(expected(want));
    },
    600_000,
    250,
  );
  const requests = env.sim.audit.length - before;
  return {
    seconds_total: (Date.now() - start) / 1000,
    requests,
    requests_per_node_change: Math.round((requests / 100) * 100) / 100,
    rss_mb_peak: env.peakRssMb(),
    cpu_seconds: await env.cpuSeconds(),
    series,
    // Last: the CCM stops here.
    rate_limited_responses: await env.close(),
  };
}
