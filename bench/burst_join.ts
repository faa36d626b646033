/**
 * The burst_join scenario: 500 Nodes registered at once: time until all are initialized, requests, memory.
 *
 * @module
 */
import type { ScenarioResult } from "./report.ts";
import type { benchEnvironment } from "./environment.ts";
import { createNodes, initTimes, quantile } from "./bench_util.ts";

/** Runs the scenario in environments made by `environment(servers)`. */
export async function burstJoin(
  environment: (servers: number) => ReturnType<typeof benchEnvironment>,
): Promise<ScenarioResult> {
  console.log("burst_join: 500 nodes registered at once ...");
  const env = await environment(500);
  const series: [number, number][] = [];
  const before = env.sim.audit.length;
  const start = Date.now();
  await createNodes(env.client, 500, 0);
  const times = await initTimes(
    env.client,
    new Set(Array.from({ length: 500 }, (_, i) => `node-${i}`)),
    start,
    300_000,
    series,
  );
  return {
    seconds_total: times.at(-1)!,
    seconds_p50: quantile(times, 0.5),
    seconds_p99: quantile(times, 0.99),
    requests: env.sim.audit.length - before,
    rss_mb_peak: env.peakRssMb(),
    cpu_seconds: await env.cpuSeconds(),
    series,
    // Last: the CCM stops here.
    rate_limited_responses: await env.close(),
  };
}
