/**
 * Credentials reload without a restart: the token in HCLOUD_TOKEN_FILE is rotated in the project
 * (the old one revoked); while the API rejects the old token `/readyz` says why without showing it,
 * and once the file holds the new token the CCM works again, unrestarted.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually, freePort } from "../testing/helpers.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { EVENTS, NODES, SERVICES } from "../kube/resources.ts";

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

Deno.test({
  name:
    "credentials: Service syncs that failed while the token was rejected run again once a good one is in use",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
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
      HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
      HCLOUD_LOAD_BALANCERS_TYPE: "lb11",
    });
    // As the kubelet's readiness probe does: /readyz also re-reads the file when due.
    const readyz = async () => await (await fetch(`http://127.0.0.1:${port}/readyz`)).body?.cancel();
    const failures = async () =>
      (await client.list(EVENTS, { namespace: "default", fieldSelector: "involvedObject.name=late" })).items
        .filter((e) => e.reason === "SyncLoadBalancerFailed").reduce((n, e) => n + (e.count ?? 1), 0);
    try {
      s.sim.addServer({ name: "w1", location: "fsn1" });
      await registerNode(client, "w1");
      await eventually(async () => !!(await client.get(NODES, "w1")).spec?.providerID);
      s.sim.tokens.delete(DEFAULT_SIM_TOKEN);
      s.sim.tokens.add(NEW_TOKEN);
      await client.create(SERVICES, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "late", namespace: "default" },
        spec: { type: "LoadBalancer", selector: { app: "late" }, ports: [{ port: 80, protocol: "TCP" }] },
      }, { namespace: "default" });
      // Four failures: the next retry of its backoff (5 s doubling) is 40 s away.
      await eventually(async () => (await failures()) >= 4, 60_000);
      await Deno.writeTextFile(file, NEW_TOKEN + "\n");
      await eventually(async () => {
        await readyz();
        return ((await client.get(SERVICES, "late", { namespace: "default" })).status?.loadBalancer
          ?.ingress ?? [])
          .length > 0;
      }, 20_000);
      assertEquals(s.sim.world.loadBalancers.size, 1);
    } finally {
      assertEquals(await ccm.stop(), 0);
      await close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
