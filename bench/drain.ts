/**
 * The draining proof as a benchmark: every Node replaced under load, with the CCM's graceful
 * draining on and off (testing/drain_scenario.ts); the failed requests of both go in the report.
 *
 * @module
 */
import { runDrainScenario } from "../testing/drain_scenario.ts";
import type { ScenarioResult } from "./report.ts";

const NODES = 3;
const RATE = 20;
const ANSWER_MS = 300;

/** Runs both and reports them. */
export async function drainScenario(): Promise<ScenarioResult> {
  const settings = { nodes: NODES, ratePerSecond: RATE, answerMs: ANSWER_MS };
  const on = await runDrainScenario({ drain: true, ...settings });
  const off = await runDrainScenario({ drain: false, ...settings });
  return {
    seconds_total: on.seconds,
    requests: on.cloudRequests,
    rate_limited_responses: 0,
    nodes: NODES,
    rate_per_second: RATE,
    answer_ms: ANSWER_MS,
    failed_with_draining: on.failed,
    requests_with_draining: on.requests,
    failed_without: off.failed,
    requests_without: off.requests,
    seconds_without: off.seconds,
    cloud_requests_without: off.cloudRequests,
  };
}
