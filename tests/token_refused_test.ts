/**
 * A token read from HCLOUD_TOKEN_FILE is used only when it is a token of this project (security
 * probe N2 and N3, issue 33): a file with a second line, or another project's token, is refused; the
 * previous token keeps working; `/readyz` says why without showing either; no log line, event or
 * error text ever holds them; and another project sees no request but the one check.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { eventually, freePort } from "../testing/helpers.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { EVENTS, NODES, SERVICES } from "../kube/resources.ts";
import { setupLogging } from "../lib/log.ts";

const TWO_LINES = "m".repeat(64);
const PROJECT_B = "b".repeat(64);

Deno.test({
  name: "credentials: a token file with a second line, or another project's token, is refused; nothing leaks",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const lines: string[] = [];
    setupLogging({ level: "debug", format: "text", write: (l) => lines.push(l) });
    // Project B: another simulator, reached with its own token through the same endpoint.
    const b = await startTestSim({ tokens: [PROJECT_B] });
    const requestsToB: string[] = [];
    const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      const toB = req.headers.get("authorization") === `Bearer ${PROJECT_B}`;
      if (toB) requestsToB.push(`${req.method} ${new URL(req.url).pathname}`);
      return (toB ? b.sim : s.sim).handle(req);
    });
    const dir = await Deno.makeTempDir();
    const file = `${dir}/token`;
    await Deno.writeTextFile(file, DEFAULT_SIM_TOKEN + "\n");
    const port = freePort();
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node,service",
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
    ], {
      HCLOUD_TOKEN: "",
      HCLOUD_TOKEN_FILE: file,
      HCLOUD_ENDPOINT: `http://127.0.0.1:${proxy.addr.port}/v1`,
      HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
    });
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz?verbose`);
      return { status: res.status, text: await res.text() };
    };
    const initialized = async (name: string) => !!(await client.get(NODES, name)).spec?.providerID;
    try {
      s.sim.addServer({ name: "node-a", ipv4: "203.0.113.70" });
      s.sim.addServer({ name: "node-b", ipv4: "203.0.113.71" });
      s.sim.addServer({ name: "node-c", ipv4: "203.0.113.72" });
      await registerNode(client, "node-a");
      await eventually(() => initialized("node-a"));

      // N2: the rotated file gets a comment line. Refused, redacted, reported; the old token works on.
      await Deno.writeTextFile(file, `${TWO_LINES}\n# rotated by ops on 2026-11-25\n`);
      let report = "";
      await eventually(async () => {
        report = (await readyz()).text;
        return report.includes("whitespace or a control character");
      }, 30_000);
      assert(report.includes(file) && report.includes("previous token stays in use"), report);
      await registerNode(client, "node-b");
      await eventually(() => initialized("node-b"));

      // N3: a token of another project. Checked against a server of this project before use: refused.
      await Deno.writeTextFile(file, PROJECT_B + "\n");
      await eventually(async () => {
        report = (await readyz()).text;
        return report.includes("another project");
      }, 30_000);
      await registerNode(client, "node-c");
      await eventually(() => initialized("node-c"));
      await client.create(SERVICES, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: "default" },
        spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 80 }] },
      }, { namespace: "default" });
      await eventually(async () =>
        ((await client.get(SERVICES, "web", { namespace: "default" })).status?.loadBalancer?.ingress ?? [])
          .length > 0
      );
      assertEquals(s.sim.world.loadBalancers.size, 1, "the balancer is made in this project");
      assertEquals(b.sim.world.loadBalancers.size, 0, "nothing is made in project B");
      assertEquals(requestsToB.every((r) => r.startsWith("GET ")), true, `only the check: ${requestsToB}`);
      assert(requestsToB.length >= 1, "the token was checked");

      // Nothing of either token anywhere: readyz, events, logs.
      const events = JSON.stringify((await client.list(EVENTS)).items);
      for (const secret of [TWO_LINES, PROJECT_B]) {
        for (const [where, text] of [["readyz", report], ["events", events], ["logs", lines.join("")]]) {
          assertEquals(text.includes(secret), false, `a token in ${where}`);
        }
      }
    } finally {
      assertEquals(await ccm.stop(), 0);
      await proxy.shutdown();
      await b.finish();
      await close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
