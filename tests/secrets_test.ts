/**
 * A canary HCLOUD_TOKEN never appears in any output of a full end-to-end run: logs at every level
 * (text and JSON), Events, error messages, metrics and every HTTP endpoint.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { adminClient } from "../testing/ccm_harness.ts";
import { spawnCcm } from "../testing/ccm_process.ts";
import { eventually, quietLogs } from "../testing/helpers.ts";
import { runScenario, SCENARIO_ARGS, SCENARIO_ENV, seedScenario } from "../testing/e2e_scenario.ts";

const CANARY = "canary-" + "7f3a9c1e5b2d4f6a".repeat(4).slice(0, 57);

Deno.test({
  name: "secrets: a canary token never reaches logs, events, errors, metrics or HTTP endpoints",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    quietLogs();
    assertEquals(CANARY.length, 64);
    const cluster = await TestCluster.start();
    const s = await startTestSim({ tokens: [CANARY] });
    seedScenario(s.sim);
    const client = await adminClient(cluster);
    const outputs: string[] = [];
    try {
      for (const format of ["json", "text"]) {
        const p = spawnCcm([
          `--kubeconfig=${cluster.kubeconfigPath}`,
          "--log-level=debug",
          `--log-format=${format}`,
          ...SCENARIO_ARGS,
        ], {
          HCLOUD_TOKEN: CANARY,
          HCLOUD_ENDPOINT: s.sim.endpoint,
          ...SCENARIO_ENV,
        });
        try {
          await eventually(
            async () => (await p.get("/readyz").catch(() => ({ status: 0 }))).status === 200,
            30_000,
          );
          if (format === "json") {
            await runScenario(client, s.sim);
            // Errors too: the cloud rejects requests for a while.
            s.sim.control.setFaults({
              rules: [{ match: ".", status: 401, code: "unauthorized", count: 20 }],
            });
            await new Promise((r) => setTimeout(r, 3_000));
            s.sim.control.setFaults({ rules: [] });
          }
          for (
            const path of ["/metrics", "/healthz?verbose", "/readyz?verbose", "/livez", "/", "/debug/pprof"]
          ) {
            outputs.push((await p.get(path)).text);
          }
        } finally {
          p.child.kill("SIGTERM");
          await p.status;
          outputs.push(p.output());
        }
      }
      outputs.push(await cluster.kubectl(["get", "events", "-A", "-o", "json"]));
      outputs.push(await cluster.kubectl(["get", "nodes,services,leases", "-A", "-o", "json"]));
      const all = outputs.join("\n");
      assert(all.includes('"level":"DEBUG"') || all.includes("DEBUG"), "debug logs were captured");
      assert(all.length > 10_000, "there was plenty of output to search");
      for (const fragment of [CANARY, CANARY.slice(0, 24), CANARY.slice(-24)]) {
        assert(!all.includes(fragment), `the token (or part of it) leaked: ${fragment}`);
      }
    } finally {
      client.transport.close();
      await s.finish();
      await cluster.stop();
    }
  },
});
