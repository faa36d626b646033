/**
 * A canary HCLOUD_TOKEN never appears in any output of a full end-to-end run: logs at every level
 * (text and JSON), Events, error messages, metrics and every HTTP endpoint. Nor does the private key of
 * a TLS Secret whose certificate the CCM uploads, and then refuses when its key no longer matches.
 */
import { testEnvironment } from "../testing/ccm_harness.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { spawnCcm } from "../testing/ccm_process.ts";
import { eventsOf, eventually, quietLogs } from "../testing/helpers.ts";
import { runScenario, SCENARIO_ARGS, SCENARIO_ENV, seedScenario } from "../testing/e2e_scenario.ts";
import type { Secret } from "kubernetes-types/core/v1.d.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Simulator } from "../hcloud_sim/simulator.ts";
import { SECRETS, SERVICES } from "../kube/resources.ts";
import { lbService } from "../testing/services.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY, RENEWED_CERT } from "./fixtures/example_com.ts";

const CANARY = "canary-" + "7f3a9c1e5b2d4f6a".repeat(4).slice(0, 57);

Deno.test({
  name: "secrets: a canary token never reaches logs, events, errors, metrics or HTTP endpoints",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    quietLogs();
    assertEquals(CANARY.length, 64);
    const { cluster, s, client, close } = await testEnvironment({ tokens: [CANARY] });
    seedScenario(s.sim);
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
          HCLOUD_LOAD_BALANCERS_TLS_SECRETS: "true",
          ...SCENARIO_ENV,
        });
        try {
          await eventually(
            async () => (await p.get("/readyz").catch(() => ({ status: 0 }))).status === 200,
            30_000,
          );
          if (format === "json") {
            await runScenario(client, s.sim);
            await serveFromTlsSecret(client, s.sim);
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
      // Nor a TLS Secret's private key, uploaded and then refused (a key not the certificate's).
      for (const line of EXAMPLE_KEY.split("\n").filter((l) => l && !l.startsWith("-----"))) {
        assert(!all.includes(line.slice(0, 32)), "a TLS Secret's private key leaked");
      }
    } finally {
      await close();
    }
  },
});

/** A Service served from a labelled TLS Secret; then the Secret's key stops matching (a Warning). */
async function serveFromTlsSecret(client: KubeClient, sim: Simulator): Promise<void> {
  await client.create(SECRETS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "web-tls", namespace: "default", labels: { "deno-ccm.io/load-balancer-tls": "true" } },
    type: "kubernetes.io/tls",
    stringData: { "tls.crt": EXAMPLE_CERT, "tls.key": EXAMPLE_KEY },
  } as Secret, { namespace: "default" });
  await client.create(
    SERVICES,
    lbService("tls", {
      "service.deno-ccm.io/port-443-protocol": "https",
      "service.deno-ccm.io/port-443-tls-secret": "web-tls",
    }, {
      ports: [{ name: "https", port: 443, protocol: "TCP" }],
    }),
  );
  await eventually(
    () => [...sim.world.certificates.values()].some((c) => c.labels["deno-ccm/tls-secret"]),
    30_000,
  );
  await client.patch(SECRETS, "web-tls", "merge", { stringData: { "tls.crt": RENEWED_CERT } }, {
    namespace: "default",
  });
  await eventually(
    async () => (await eventsOf(client, "tls")).some((e) => e.includes("TlsSecretInvalid")),
    30_000,
  );
}
