/**
 * The CCM beside a real kube-controller-manager (`--cloud-provider=external`), as clusters run them:
 * the pod CIDRs come from its node IPAM (the harness writes none) and our route controller routes
 * them; a Node whose kubelet stops renewing its Lease is marked `Unknown` and tainted unreachable by
 * its node lifecycle (the harness does not), and once its server is gone our node lifecycle deletes
 * it and our route controller drops its route. Our node IPAM, turned on by mistake beside its
 * allocator, sees pod CIDRs it did not write and stops, naming kube-controller-manager.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { SCENARIO_ARGS, SCENARIO_CLUSTER_CIDR, SCENARIO_ENV, seedScenario } from "../testing/e2e_scenario.ts";
import { KubeControllerManager } from "../testing/kube_controller_manager.ts";
import { EVENTS, LEASES, NODES } from "../kube/resources.ts";
import { UNINITIALIZED_TAINT } from "../kube/well_known.ts";
import type { KubeClient } from "../kube/client.ts";

/** A kubelet's heartbeat: its Lease in kube-node-lease, renewed now. */
async function heartbeat(client: KubeClient, node: string): Promise<void> {
  const renewTime = new Date().toISOString().replace("Z", "000Z");
  const lease = {
    apiVersion: "coordination.k8s.io/v1" as const,
    kind: "Lease" as const,
    metadata: { name: node, namespace: "kube-node-lease" },
    spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime },
  };
  try {
    await client.patch(LEASES, node, "merge", { spec: { renewTime } }, { namespace: "kube-node-lease" });
  } catch {
    await client.create(LEASES, lease, { namespace: "kube-node-lease" });
  }
}

const ready = (n: Node) => (n.status?.conditions ?? []).find((c) => c.type === "Ready");

Deno.test({
  name:
    "kube-controller-manager: its pod CIDRs are routed; a silent Node it marks Unknown is deleted once its server is gone",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    seedScenario(s.sim);
    const ccm = await startCcm(cluster, s.sim, [
      // Our node IPAM too, by mistake. Its IPv6 range (outside the simulator's server ranges) keeps it
      // waiting, so kube-controller-manager's allocator is the one that writes.
      "--controllers=cloud-node,cloud-node-lifecycle,route,node-ipam-controller",
      ...SCENARIO_ARGS,
      "--allocate-node-cidrs=true",
      `--cluster-cidr=${SCENARIO_CLUSTER_CIDR},2a01:4f8::/32`,
    ], SCENARIO_ENV);
    let kcm: KubeControllerManager | undefined;
    const alive = new Set(["cp", "w1", "w2"]);
    let beating = true;
    const beats = (async () => {
      while (beating) {
        for (const name of alive) await heartbeat(client, name).catch(() => {});
        await new Promise((r) => setTimeout(r, 2_000));
      }
    })();
    try {
      const now = new Date().toISOString();
      const status = {
        conditions: [{
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        }],
      };
      for (const name of alive) await registerNode(client, name, { status });
      const nodes = async () => (await client.list(NODES)).items;
      // Initialized by our CCM first: it has seen every Node without pod CIDRs. Only then does
      // kube-controller-manager start (its allocator would otherwise write before our first list,
      // which shows no change to tell by).
      await eventually(async () =>
        (await nodes()).every((n) => !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT))
      );
      kcm = await KubeControllerManager.start(cluster, SCENARIO_CLUSTER_CIDR);
      const network = s.sim.world.findNetwork("k8s")!;
      // kube-controller-manager gives each Node a pod CIDR (the harness wrote none); we route each.
      await eventually(async () => {
        const all = await nodes();
        return all.length === 3 && all.every((n) => n.spec?.podCIDR) &&
          all.every((n) => !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT));
      }, 60_000).catch(async (err) => {
        throw new Error(`${err.message}\nkube-controller-manager log:\n${await kcm!.logTail()}`);
      });
      const cidrs = new Map((await nodes()).map((n) => [n.metadata!.name!, n.spec!.podCIDR!]));
      assertEquals(new Set(cidrs.values()).size, 3, "one CIDR each");
      for (const cidr of cidrs.values()) assert(cidr.startsWith("10.244.") && cidr.endsWith("/24"), cidr);
      const routed = () => new Map(network.routes.map((r) => [r.destination, r.gateway]));
      await eventually(() => [...cidrs.values()].every((c) => routed().has(c)), 30_000);
      for (const [name, cidr] of cidrs) {
        const server = [...s.sim.world.servers.values()].find((x) => x.name === name)!;
        assertEquals(routed().get(cidr), server.private_net[0].ip, `${name}'s pods go to its server`);
      }

      // Our allocator saw pod CIDRs it did not write and stopped, naming the other writer.
      const conflicts = async () =>
        (await client.list(EVENTS, { namespace: "default" })).items.filter((e) =>
          e.reason === "PodCIDRAllocatorConflict"
        );
      await eventually(async () => (await conflicts()).length > 0, 30_000);
      const [conflict] = await conflicts();
      assert(
        conflict.message?.includes(
          `from "kube-controller-manager", not from deno-ccm: another allocator runs`,
        ),
        conflict.message,
      );
      for (const n of await nodes()) {
        assertEquals(n.spec?.podCIDRs?.length, 1, "only kube-controller-manager's");
      }

      // w2's kubelet goes silent: kube-controller-manager marks it Unknown, and (in a pass of its own,
      // so possibly a moment later) taints it unreachable.
      alive.delete("w2");
      const unreachable = (n: Node) =>
        (n.spec?.taints ?? []).some((t) => t.key === "node.kubernetes.io/unreachable");
      await eventually(async () => {
        const n = await client.get(NODES, "w2");
        return ready(n)?.status === "Unknown" && unreachable(n);
      }, 60_000);
      assertEquals(
        ready(await client.get(NODES, "w2"))?.reason,
        "NodeStatusUnknown",
        "marked by kube-controller-manager",
      );
      for (const name of ["cp", "w1"]) assertEquals(ready(await client.get(NODES, name))?.status, "True");

      // Its server is deleted: our node lifecycle deletes the Node, our route controller its route.
      const server = [...s.sim.world.servers.values()].find((x) => x.name === "w2")!;
      s.sim.control.deleteServer(server.id);
      await eventually(async () => !(await nodes()).some((n) => n.metadata?.name === "w2"), 30_000);
      await eventually(() => !routed().has(cidrs.get("w2")!), 30_000);
      assertEquals((await nodes()).map((n) => n.metadata?.name).sort(), ["cp", "w1"]);
    } finally {
      beating = false;
      await beats;
      await ccm.stop();
      await kcm?.stop();
      await close();
    }
  },
});
