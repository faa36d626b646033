/**
 * The lb_rollout scenario: 50 LoadBalancer Services at once on 100 Nodes: time until every one has an address.
 *
 * @module
 */
import type { ScenarioResult } from "./report.ts";
import type { benchEnvironment } from "./environment.ts";
import { createNodes, createServices, ingressCount, initTimes, quantile, waitFor } from "./bench_util.ts";

/** Runs the scenario in environments made by `environment(servers)`. */
export async function lbRollout(
  environment: (servers: number) => ReturnType<typeof benchEnvironment>,
): Promise<ScenarioResult> {
  console.log("lb_rollout: 50 LoadBalancer Services at once on 100 nodes ...");
  const env = await environment(100);
  await createNodes(env.client, 100, 0);
  await initTimes(
    env.client,
    new Set(Array.from({ length: 100 }, (_, i) => `node-${i}`)),
    Date.now(),
    300_000,
    [],
  );
  const before = env.sim.audit.length;
  const series: [number, number][] = [];
  const start = Date.now();
  await createServices(env.client, 50);
  const times: number[] = [];
  await waitFor(
    async () => {
      const ready = await ingressCount(env.client);
      while (times.length < ready) times.push((Date.now() - start) / 1000);
      series.push([(Date.now() - start) / 1000, ready / 50]);
      return ready === 50;
    },
    600_000,
    250,
  );
  return {
    seconds_total: times.at(-1)!,
    seconds_p99: quantile(times, 0.99),
    requests: env.sim.audit.length - before,
    rss_mb_peak: env.peakRssMb(),
    cpu_seconds: await env.cpuSeconds(),
    series,
    // Last: the CCM stops here.
    rate_limited_responses: await env.close(),
  };
}
