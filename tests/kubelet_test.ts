/**
 * Real kubelets (`--cloud-provider=external`, one also with `--node-ip`) beside a real
 * kube-controller-manager and the CCM: the CCM initializes the Nodes the kubelets register; over a
 * stretch of the kubelets' own status updates the addresses, labels, taints and provider ID stay as
 * the CCM set them and the CCM writes nothing (no flapping, no conflicts); a stopped kubelet's Node
 * goes `Unknown` and, once its server is gone, is deleted. The pod CIDRs come from our node IPAM
 * (kube-controller-manager's allocator off), IPv4 and IPv6 from each server's /64, and each kubelet
 * hands both to the container runtime.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { SCENARIO_ARGS, SCENARIO_CLUSTER_CIDR, SCENARIO_ENV, seedScenario } from "../testing/e2e_scenario.ts";
import { KubeControllerManager } from "../testing/kube_controller_manager.ts";
import { Containerd } from "../testing/containerd.ts";
import { Kubelet } from "../testing/kubelet.ts";
import { NODES } from "../kube/resources.ts";
import { PROVIDED_NODE_IP, UNINITIALIZED_TAINT } from "../kube/well_known.ts";

const NOT_READY_TAINT = "node.kubernetes.io/not-ready";
/** How long the kubelets post status while the test watches (about 9 full status reports each). */
const OBSERVE_MS = 90_000;

const condition = (n: Node, type: string) => (n.status?.conditions ?? []).find((c) => c.type === type);

/** What the CCM sets on a Node and nobody else may change: the test's view of "as the CCM set it". */
function ccmView(n: Node) {
  return {
    providerID: n.spec?.providerID,
    addresses: n.status?.addresses,
    labels: n.metadata?.labels,
    taints: (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort(),
    podCIDRs: n.spec?.podCIDRs,
  };
}

Deno.test({
  name: "real kubelets: initialized by the CCM, stable under their own status updates, deleted once gone",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    seedScenario(s.sim);
    const runtime = await Containerd.start(cluster.dir);
    const kcm = await KubeControllerManager.start(
      cluster,
      SCENARIO_CLUSTER_CIDR,
      "node-lifecycle-controller",
    );
    const ccm = await startCcm(cluster, s.sim, [
      "--controllers=cloud-node,cloud-node-lifecycle,route,node-ipam-controller",
      ...SCENARIO_ARGS,
      "--allocate-node-cidrs=true",
      `--cluster-cidr=${SCENARIO_CLUSTER_CIDR},2001:db8::/32`,
    ], SCENARIO_ENV);
    const server = (name: string) => [...s.sim.world.servers.values()].find((x) => x.name === name)!;
    const w2Ip = server("w2").private_net[0].ip!;
    const kubelets: Kubelet[] = [];
    const logs = async () => {
      const parts = [];
      for (const k of kubelets) parts.push(`kubelet ${k.options.name}:\n${await k.logTail(15)}`);
      return `${parts.join("\n")}\nkube-controller-manager:\n${await kcm.logTail(10)}`;
    };
    try {
      kubelets.push(await Kubelet.start(cluster, runtime, { name: "w1", index: 1 }));
      kubelets.push(await Kubelet.start(cluster, runtime, { name: "w2", index: 2, nodeIp: w2Ip }));
      const network = s.sim.world.findNetwork("k8s")!;
      const routed = () => new Map(network.routes.map((r) => [r.destination, r.gateway]));
      // Settled: initialized, routed, Ready, and kube-controller-manager has lifted the not-ready
      // taint (it does so a monitor period after Ready).
      const settled = (n: Node) =>
        n.spec?.providerID &&
        !(n.spec.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT || t.key === NOT_READY_TAINT) &&
        condition(n, "Ready")?.status === "True" && condition(n, "NetworkUnavailable")?.status === "False" &&
        n.spec.podCIDR && routed().get(n.spec.podCIDR) === server(n.metadata!.name!).private_net[0].ip;
      await eventually(async () => {
        const all = (await client.list(NODES)).items;
        return all.length === 2 && all.every(settled);
      }, 90_000).catch(async (err) => {
        throw new Error(`${err.message}\n${await logs()}`);
      });

      // Pod CIDRs from our node IPAM: a /24 of the cluster's range, then index 1 of the server's /64
      // at /80; each kubelet passed both to containerd (it logs them once the runtime took them).
      const v4 = new Set<string>();
      for (const name of ["w1", "w2"]) {
        const n = await client.get(NODES, name);
        const net = server(name).public_net.ipv6!.ip.replace("::/64", "");
        const [ipv4, ipv6] = n.spec?.podCIDRs ?? [];
        assert(/^10\.244\.\d+\.0\/24$/.test(ipv4 ?? ""), `${name}: ${n.spec?.podCIDRs}`);
        v4.add(ipv4);
        assertEquals(ipv6, `${net}:1::/80`, `${name}'s IPv6 pod range is its server's`);
        const kubelet = kubelets.find((k) => k.options.name === name)!;
        await eventually(
          async () => (await Deno.readTextFile(kubelet.logPath)).includes(`newPodCIDR="${ipv4},${ipv6}"`),
          30_000,
        )
          .catch(async (err) => {
            const text = await Deno.readTextFile(kubelet.logPath).catch((e) => `unreadable: ${e}`);
            const lines = text.split("\n").filter((l) => l.includes("CIDR")).join("\n");
            throw new Error(`${err.message}\n${text.length} bytes; CIDR lines:\n${lines}\n${await logs()}`);
          });
      }
      assertEquals(v4.size, 2, "one IPv4 range each");

      // As the CCM set them: the cloud's addresses and the server's labels; the kubelet's node IP
      // (w2) validated against the server's addresses and listed first.
      const nodes = new Map((await client.list(NODES)).items.map((n) => [n.metadata!.name!, n]));
      for (const name of ["w1", "w2"]) {
        const n = nodes.get(name)!;
        const srv = server(name);
        assertEquals(n.spec?.providerID, `hcloud://${srv.id}`);
        assertEquals(n.metadata?.labels?.["node.kubernetes.io/instance-type"], "cpx21");
        assertEquals(n.metadata?.labels?.["topology.kubernetes.io/region"], "fsn1");
        const addresses = (n.status?.addresses ?? []).map((a) => `${a.type}=${a.address}`);
        for (
          const want of [
            `InternalIP=${srv.private_net[0].ip}`,
            `ExternalIP=${srv.public_net.ipv4!.ip}`,
            `Hostname=${name}`,
          ]
        ) assert(addresses.includes(want), `${name}: ${want} in ${addresses}`);
      }
      assertEquals(
        nodes.get("w2")!.metadata?.annotations?.[PROVIDED_NODE_IP],
        w2Ip,
        "the kubelet's --node-ip",
      );
      assertEquals(nodes.get("w2")!.status?.addresses?.[0], { type: "InternalIP", address: w2Ip });

      // The kubelets post their status for a while: every version of each Node the watch shows is
      // as the CCM set it, and the CCM writes nothing to the Kubernetes API meanwhile.
      const baseline = new Map([...nodes].map(([name, n]) => [name, ccmView(n)]));
      // The CCM's patches and updates by response code, from its request counter (any code counts).
      const writes = () =>
        new Map(
          [
            ...ccm.registry.counter("kube_api_requests_total", "").render().matchAll(
              /^kube_api_requests_total\{(code="\d+",verb="(?:patch|update)")\} (\d+)$/gm,
            ),
          ].map((m) => [m[1], Number(m[2])]),
        );
      const writesBefore = writes();
      assert(writesBefore.size > 0, "the CCM's writes of the initialization are counted");
      const resourceVersion = (await client.list(NODES)).metadata?.resourceVersion;
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), OBSERVE_MS);
      const modified = new Map<string, number>();
      const drifted: string[] = [];
      try {
        for await (
          const ev of client.watch(NODES, {
            resourceVersion,
            signal: stop.signal,
            timeoutSeconds: OBSERVE_MS / 1000,
          })
        ) {
          if (ev.type !== "MODIFIED") continue;
          const name = ev.object.metadata!.name!;
          modified.set(name, (modified.get(name) ?? 0) + 1);
          const now = ccmView(ev.object);
          const was = baseline.get(name)!;
          for (const field of Object.keys(now) as (keyof typeof now)[]) {
            if (JSON.stringify(now[field]) === JSON.stringify(was[field])) continue;
            drifted.push(`${name} ${field}: ${JSON.stringify(was[field])} -> ${JSON.stringify(now[field])}`);
          }
        }
      } catch (err) {
        if (!stop.signal.aborted) throw err;
      } finally {
        clearTimeout(timer);
      }
      assertEquals(drifted, [], "no Node left the state the CCM set");
      for (const name of ["w1", "w2"]) {
        // A status report every 10 s (the kubelets' nodeStatusReportFrequency here): several in the window.
        assert(
          (modified.get(name) ?? 0) >= 5,
          `${name}'s kubelet posted status ${modified.get(name) ?? 0} times`,
        );
      }
      // No write at all, so no conflict (409) either.
      const written = [...writes()].filter(([series, n]) => n !== (writesBefore.get(series) ?? 0));
      assertEquals(written, [], "the CCM wrote nothing while the kubelets posted status");
      console.log(
        `status updates watched in ${OBSERVE_MS / 1000} s: ${JSON.stringify(Object.fromEntries(modified))}`,
      );

      // w1's kubelet stops: kube-controller-manager marks its Node Unknown; its server still exists,
      // so the Node stays; once the server is deleted, our node lifecycle deletes the Node and our
      // route controller drops its route.
      await kubelets[0].stop();
      await eventually(
        async () => condition(await client.get(NODES, "w1"), "Ready")?.status === "Unknown",
        60_000,
      );
      // Several of our node lifecycle's passes (1 s apart) with the Node Unknown and its server there.
      await new Promise((r) => setTimeout(r, 5_000));
      assertEquals((await client.list(NODES)).items.length, 2, "an Unknown Node whose server exists stays");
      const w1Cidr = nodes.get("w1")!.spec!.podCIDR!;
      s.sim.control.deleteServer(server("w1").id);
      await eventually(
        async () => !(await client.list(NODES)).items.some((n) => n.metadata?.name === "w1"),
        30_000,
      );
      await eventually(() => !routed().has(w1Cidr), 30_000);
      assertEquals(condition(await client.get(NODES, "w2"), "Ready")?.status, "True");
    } finally {
      for (const k of kubelets) await k.stop();
      await kcm.stop();
      await runtime.stop();
      await close(ccm);
    }
  },
});
