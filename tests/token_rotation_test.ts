/**
 * Credentials reload without a restart: the token in HCLOUD_TOKEN_FILE is rotated in the project
 * (the old one revoked); while the API rejects the old token `/readyz` says why without showing it,
 * and once the file holds the new token the CCM works again, unrestarted.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually, freePort } from "../testing/helpers.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { NODES } from "../kube/resources.ts";

const NEW_TOKEN = "n".repeat(64);

Deno.test({
  name: "credentials: a rotated HCLOUD_TOKEN_FILE is picked up; a rejected token makes /readyz say so",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const dir = await Deno.makeTempDir();
    const file = `${dir}/token`;
    await Deno.writeTextFile(file, DEFAULT_SIM_TOKEN + "\n");
    const port = freePort();
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node,cloud-node-lifecycle",
      "--node-monitor-period=1s",
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
    ], { HCLOUD_TOKEN: "", HCLOUD_TOKEN_FILE: file });
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz?verbose`);
      return { status: res.status, text: await res.text() };
    };
    const providerIdOf = async (name: string) => (await client.get(NODES, name)).spec?.providerID;
    try {
      const a = s.sim.addServer({ name: "node-a", ipv4: "203.0.113.60" });
      const b = s.sim.addServer({ name: "node-b", ipv4: "203.0.113.61" });
      await registerNode(client, "node-a", { nodeIp: "203.0.113.60" });
      await eventually(async () => !!(await providerIdOf("node-a")));
      await eventually(async () => (await readyz()).status === 200);

      // The project's token is rotated: the old one is revoked.
      s.sim.tokens.delete(DEFAULT_SIM_TOKEN);
      s.sim.tokens.add(NEW_TOKEN);
      let report = "";
      await eventually(async () => {
        const r = await readyz();
        report = r.text;
        return r.status !== 200 && r.text.includes("rejects the token (401 Unauthorized)");
      });
      assert(report.includes(file), `names the file: ${report}`);
      assert(!report.includes(DEFAULT_SIM_TOKEN) && !report.includes(NEW_TOKEN), "the token is never shown");

      // The Secret volume gets the new token: no restart needed.
      await Deno.writeTextFile(file, NEW_TOKEN + "\n");
      await eventually(async () => (await readyz()).status === 200);
      await registerNode(client, "node-b", { nodeIp: "203.0.113.61" });
      await eventually(async () => (await providerIdOf("node-b")) === `hcloud://${b.id}`);
      assertEquals(await providerIdOf("node-a"), `hcloud://${a.id}`);
    } finally {
      assertEquals(await ccm.stop(), 0);
      await close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
