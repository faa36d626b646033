/**
 * The imitation checked against the real thing: the Node the test harness registers
 * (`registerNode`, which most tests use for speed) against the Node a real kubelet registers, field
 * by field, once without and once with `--node-ip`; then both after the CCM initialized them. Values
 * that name the machine (the Node's name, its IPs, its server's ID) are compared by their role.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { registerNode, setReady, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { Containerd } from "../testing/containerd.ts";
import { Kubelet } from "../testing/kubelet.ts";
import { seedScenario } from "../testing/e2e_scenario.ts";
import { NODES } from "../kube/resources.ts";
import { UNINITIALIZED_TAINT } from "../kube/well_known.ts";
import { isReady } from "../controllers/mod.ts";
import type { Simulator } from "../hcloud_sim/simulator.ts";

/** The Node as the CCM sees it, with machine-specific values replaced by their role. */
function shape(n: Node, sim: Simulator, registration = false) {
  const name = n.metadata!.name!;
  const srv = [...sim.world.servers.values()].find((x) => x.name === name)!;
  const roles = new Map<string, string>([
    [name, "<name>"],
    [srv.private_net[0].ip!, "<private-ip>"],
    [srv.public_net.ipv4!.ip, "<public-ipv4>"],
    [`hcloud://${srv.id}`, "hcloud://<server-id>"],
  ]);
  const role = (v: string | undefined) => v === undefined ? v : roles.get(v) ?? v;
  return {
    labels: Object.fromEntries(Object.entries(n.metadata?.labels ?? {}).map(([k, v]) => [k, role(v)])),
    annotations: Object.fromEntries(
      Object.entries(n.metadata?.annotations ?? {}).map(([k, v]) => [k, role(v)]),
    ),
    providerID: role(n.spec?.providerID),
    taints: (n.spec?.taints ?? []).map((t) => ({ key: t.key, value: t.value, effect: t.effect })),
    addresses: (n.status?.addresses ?? []).map((a) => ({ type: a.type, address: role(a.address) })),
    // A kubelet's first Ready status depends on how soon its runtime answered; later ones are compared.
    conditions: (n.status?.conditions ?? []).map((c) =>
      c.type === "Ready" && registration ? "Ready" : `${c.type}=${c.status}/${c.reason}`
    ).sort(),
  };
}

Deno.test({
  name: "the harness registers Nodes as a real kubelet does, and the CCM initializes both alike",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    seedScenario(s.sim, ["k1", "k2", "h1", "h2"]);
    const ip = (name: string) =>
      [...s.sim.world.servers.values()].find((x) => x.name === name)!.private_net[0].ip!;
    const runtime = await Containerd.start(cluster.dir);
    const kubelets: Kubelet[] = [];
    // Every Node as it is created (the kubelet sends its status with the create).
    const created = new Map<string, Node>();
    const watching = new AbortController();
    const resourceVersion = (await client.list(NODES)).metadata?.resourceVersion;
    const watch = (async () => {
      for await (const ev of client.watch(NODES, { resourceVersion, signal: watching.signal })) {
        if (ev.type === "ADDED") created.set(ev.object.metadata!.name!, ev.object);
      }
    })().catch(() => {});
    let ccm: Awaited<ReturnType<typeof startCcm>> | undefined;
    try {
      kubelets.push(await Kubelet.start(cluster, runtime, { name: "k1", index: 3 }));
      kubelets.push(await Kubelet.start(cluster, runtime, { name: "k2", index: 4, nodeIp: ip("k2") }));
      await registerNode(client, "h1");
      await registerNode(client, "h2", { nodeIp: ip("h2") });
      await eventually(() => created.size === 4, 60_000).catch(async (err) => {
        throw new Error(`${err.message}: ${[...created.keys()]}\n${await kubelets[0].logTail()}`);
      });
      console.log(`kubelet ${created.get("k1")!.status?.nodeInfo?.kubeletVersion}`);
      const registered = (name: string) => shape(created.get(name)!, s.sim, true);
      assertEquals(registered("h1"), registered("k1"), "registered, no --node-ip");
      assertEquals(registered("h2"), registered("k2"), "registered, --node-ip");

      // Ready as the kubelet reports it (the harness's setReady).
      const get = (name: string) => client.get(NODES, name);
      for (const name of ["h1", "h2"]) await setReady(client, name, true);
      await eventually(async () => isReady(await get("k1")), 60_000);
      await eventually(async () => isReady(await get("k2")), 60_000);

      ccm = await startCcm(cluster, s.sim, ["--controllers=cloud-node"], {
        HCLOUD_NETWORK: "k8s",
        HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
      });
      await eventually(
        async () =>
          (await client.list(NODES)).items.every((n) =>
            !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT)
          ),
        60_000,
      );
      assertEquals(shape(await get("h1"), s.sim), shape(await get("k1"), s.sim), "initialized, no --node-ip");
      assertEquals(shape(await get("h2"), s.sim), shape(await get("k2"), s.sim), "initialized, --node-ip");
    } finally {
      watching.abort();
      await watch;
      for (const k of kubelets) await k.stop();
      await runtime.stop();
      await close(ccm);
    }
  },
});
