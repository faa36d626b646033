/**
 * The proof of graceful draining, through the simulator's data path: every Node of the cluster is
 * marked by the autoscaler, taken out of the balancer, deleted with its server and replaced while
 * requests flow through the balancer; with the CCM's draining on, not one fails
 * (testing/drain_scenario.ts; bench/report.md has the same run with draining off).
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { quietLogs } from "../testing/helpers.ts";
import { runDrainScenario } from "../testing/drain_scenario.ts";

Deno.test({
  name: "draining proof: every Node replaced under load, 0 failed requests with draining on",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    quietLogs();
    const run = await runDrainScenario({ drain: true });
    console.log(
      `${run.requests} requests over ${run.seconds} s while ${run.nodesReplaced} Nodes were replaced: ${run.failed} failed`,
    );
    assert(run.requests > 100, `only ${run.requests} requests`);
    assertEquals(run.failed, 0);
  },
});
