/**
 * The way back (issue 61 item 5): deno-ccm runs (Nodes, its own balancer with the label-selector target,
 * a shared balancer), is scaled to 0, and the official CCM takes over (simulated: it adds a server target
 * per Node to the balancer of the Service it knows). `--residue=list` names every piece with what the
 * official CCM does with it; `--residue=remove` is refused while a deno-ccm ReplicaSet still runs, then
 * removes the selector target (now a duplicate), the servers' target labels and deno-ccm's balancer
 * labels, and leaves what still serves traffic (the shared balancer, a selector target that is a
 * balancer's only target, the server labels such a target follows) to the operator, named with the
 * command that removes it; once the operator deleted the shared balancer, the labels go and nothing is left.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { residueCommand } from "../residue_command.ts";
import { parseFlags } from "../config/flags.ts";
import { resolveControllers } from "../config/controllers_flag.ts";
import { createProvider } from "../providers/registry.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { Registry } from "../lib/metrics.ts";
import { NODES, REPLICA_SETS, SERVICES } from "../kube/resources.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";

function service(name: string, annotations: Record<string, string> = {}, port = 80): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", annotations },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ name: "p", port, protocol: "TCP" }] },
  };
}

Deno.test({
  name:
    "residue: listed with what the official CCM does with each; removed only once ours is gone, never what serves",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, sim, client, close } = await testEnvironment();
    for (const name of ["n1", "n2"]) {
      sim.addServer({ name, location: "fsn1" });
      await registerNode(client, name);
    }
    const env = { HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1" };
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"], env);
    const served = async (name: string) =>
      ((await client.get(SERVICES, name, { namespace: "default" })).status?.loadBalancer?.ingress ?? [])
        .length > 0;
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      await client.create(SERVICES, service("web"));
      await client.create(SERVICES, service("a", { "service.deno-ccm.io/load-balancer-share": "edge" }, 81));
      await client.create(SERVICES, service("b", { "service.deno-ccm.io/load-balancer-share": "edge" }, 82));
      for (const name of ["web", "a", "b"]) await eventually(() => served(name), 30_000);
    } finally {
      await ccm.stop();
    }
    const balancers = () => [...sim.world.loadBalancers.values()];
    const webId = balancers().find((lb) => lb.labels["deno-ccm/service-name"] === "web")!.id;
    const sharedId = balancers().find((lb) => lb.labels["deno-ccm/share"] === "edge")!.id;
    const web = () => sim.world.loadBalancers.get(webId)!;
    const shared = () => sim.world.loadBalancers.get(sharedId)!;
    const serverIds = [...sim.world.servers.values()].map((x) => x.id);
    const targetLabels = () => serverIds.map((id) => sim.world.servers.get(id)!.labels["deno-ccm/lb-target"]);
    // The official CCM takes over the Service it knows: a server target per Node beside ours.
    for (const id of serverIds) {
      const r = await s.api("POST", `/load_balancers/${webId}/actions/add_target`, {
        type: "server",
        server: { id },
      });
      assert(r.status < 300, JSON.stringify(r.body));
    }

    const run = async (mode: "list" | "remove") => {
      const { flags } = parseFlags([]);
      const provider = await createProvider(flags, resolveControllers(["*"]).enabled, {
        HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
        HCLOUD_ENDPOINT: sim.endpoint,
      }, new Registry());
      const lines: string[] = [];
      const code = await residueCommand(
        mode,
        await cluster.adminConnection(),
        provider.provider!,
        (l) => lines.push(l),
      );
      return { code, text: lines.join("\n") };
    };
    try {
      const listed = await run("list");
      assertEquals(listed.code, 0, listed.text);
      for (
        const want of [
          `selector-target on ${web().name} (${webId})`,
          `selector-target on ${shared().name} (${sharedId})`,
          "kept: no server target yet",
          `server-label on n1`,
          `balancer-labels on ${web().name}`,
          `shared-balancer on ${shared().name} (${sharedId})`,
          `hcloud load-balancer delete ${sharedId}`,
        ]
      ) assert(listed.text.includes(want), `${want}\n${listed.text}`);
      assertEquals(targetLabels().every((v) => v !== undefined), true, "listing changes nothing");

      // Ours still has a pod: refused, nothing changed.
      await client.create(REPLICA_SETS, {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: "ours", namespace: "kube-system" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "ours" } },
          template: {
            metadata: { labels: { app: "ours" } },
            spec: { containers: [{ name: "ccm", image: "ghcr.io/deno-ccm/deno-ccm:0.1.0" }] },
          },
        },
      }, { namespace: "kube-system" });
      const refused = await run("remove");
      assertEquals(refused.code, 1);
      assert(
        refused.text.includes("refused: deno-ccm still runs (ReplicaSet kube-system/ours)"),
        refused.text,
      );
      assert(web().targets.some((t) => t.type === "label_selector"), "nothing removed");

      await client.delete(REPLICA_SETS, "ours", { namespace: "kube-system" });
      const removed = await run("remove");
      assertEquals(removed.code, 0, removed.text);
      assertEquals(web().targets.map((t) => t.type), ["server", "server"], "the official CCM's targets stay");
      assert(
        shared().targets.some((t) => t.type === "label_selector"),
        "the shared balancer's only target stays",
      );
      assertEquals(
        targetLabels().every((v) => v !== undefined),
        true,
        "the shared balancer's target follows them",
      );
      assertEquals(Object.keys(web().labels).filter((k) => k.startsWith("deno-ccm/")), []);
      assert(web().labels["hcloud-ccm/service-uid"], "the official CCM's own label stays");

      // The operator deletes the shared balancer once its Services have their own: the labels go next.
      await s.api("DELETE", `/load_balancers/${sharedId}`);
      const last = await run("remove");
      assertEquals(last.code, 0, last.text);
      assertEquals(targetLabels(), [undefined, undefined]);
      const after = await run("list");
      assert(after.text.includes(": 0 pieces"), after.text);
    } finally {
      await close();
    }
  },
});
