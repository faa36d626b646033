/**
 * A balancer name is no way into another Service's balancer (issue 33, probe N6): a tenant naming
 * another Service's balancer is refused, and still refused once that balancer is lost (the Service
 * whose name it is gets it back, whichever of the two syncs first);
 * a balancer or managed certificate left by a deleted Service is taken over only by a Service of
 * the same namespace and name.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { EVENTS, NAMESPACES, NODES, SERVICES } from "../kube/resources.ts";

const P = "load-balancer.hetzner.cloud/";
const GONE_UID = "0d1e2a3d-0000-4000-8000-00000000dead";

function service(namespace: string, name: string, annotations: Record<string, string> = {}): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, annotations },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ port: 80, protocol: "TCP" }] },
  };
}

Deno.test({
  name: "name squatting: another Service's balancer name is refused, before and after the balancer is lost",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    s.sim.addServer({ name: "w1", location: "fsn1" });
    await registerNode(client, "w1");
    for (const name of ["evil", "team-a"]) {
      await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
    }
    // Left behind by team-a/shop, deleted while no CCM ran: a balancer and a managed certificate
    // (this cluster's: its mark, which a balancer of another cluster lacks, probe P11).
    const clusterId = (await client.get(NAMESPACES, "kube-system")).metadata!.uid!;
    const leftBehind = {
      "hcloud-ccm/service-uid": GONE_UID,
      "deno-ccm/cluster-id": clusterId,
      "deno-ccm/service-namespace": "team-a",
      "deno-ccm/service-name": "shop",
    };
    const shopLb = (await s.api("POST", "/load_balancers", {
      name: "shop-lb",
      load_balancer_type: "lb11",
      location: "fsn1",
      labels: leftBehind,
    })).body.load_balancer;
    await s.api("POST", "/certificates", {
      name: "shop-cert",
      type: "managed",
      domain_names: ["shop.example.com"],
      labels: leftBehind,
    });
    const env = { HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1", HCLOUD_LOAD_BALANCERS_TYPE: "lb11" };
    // Drift repair off: the victim's loss is noticed only when its Service changes (see below).
    const args = ["--controllers=cloud-node,service", "--drift-repair-period=0"];
    const ccm = await startCcm(cluster, s.sim, args, env);
    const failure = async (namespace: string, name: string) =>
      (await client.list(EVENTS, { namespace, fieldSelector: `involvedObject.name=${name}` })).items
        .filter((e) => e.reason === "SyncLoadBalancerFailed").map((e) => e.message ?? "").join("\n");
    const ingress = async (namespace: string, name: string) =>
      (await client.get(SERVICES, name, { namespace })).status?.loadBalancer?.ingress ?? [];
    const balancersNamed = (name: string) =>
      [...s.sim.world.loadBalancers.values()].filter((b) => b.name === name);
    try {
      await eventually(async () => !!(await client.get(NODES, "w1")).spec?.providerID, 20_000);
      const victim = await client.create(SERVICES, service("default", "victim"), { namespace: "default" });
      const victimName = `a${victim.metadata!.uid!.replace(/-/g, "")}`.slice(0, 32);
      await eventually(async () => (await ingress("default", "victim")).length > 0, 20_000);

      await client.create(SERVICES, service("evil", "hijack", { [`${P}name`]: victimName }), {
        namespace: "evil",
      });
      await client.create(SERVICES, service("evil", "shop", { [`${P}name`]: "shop-lb" }), {
        namespace: "evil",
      });
      await client.create(
        SERVICES,
        service("evil", "cert", {
          [`${P}name`]: "evil-cert-lb",
          [`${P}protocol`]: "https",
          [`${P}certificate-type`]: "managed",
          [`${P}http-managed-certificate-name`]: "shop-cert",
          [`${P}http-managed-certificate-domains`]: "shop.example.com",
        }),
        { namespace: "evil" },
      );
      await eventually(async () =>
        (await failure("evil", "hijack")).includes(`belongs to another Service (UID ${victim.metadata!.uid})`)
      );
      await eventually(async () => (await failure("evil", "shop")).includes("made for Service team-a/shop"));
      await eventually(async () => (await failure("evil", "cert")).includes("made for Service team-a/shop"));
      assertEquals(balancersNamed("shop-lb").map((b) => [b.id, b.services.length, b.targets.length]), [
        [shopLb.id, 0, 0],
      ]);
      assertEquals(balancersNamed("evil-cert-lb").length, 0);

      // The victim's balancer is lost (a project restored from a backup). Whichever of the two syncs
      // first, the name stays the victim's: the tenant's Service syncs first here.
      const lost = balancersNamed(victimName)[0];
      await s.api("DELETE", `/load_balancers/${lost.id}`);
      const touch = async (namespace: string, name: string) =>
        await client.patch(SERVICES, name, "merge", {
          metadata: { annotations: { "example.com/touched": "1" } },
        }, {
          namespace,
        });
      await touch("evil", "hijack");
      await eventually(async () =>
        (await failure("evil", "hijack")).includes("claimed by Service default/victim")
      );
      assertEquals(balancersNamed(victimName).length, 0);
      assertEquals((await ingress("evil", "hijack")).length, 0);
      await touch("default", "victim");
      await eventually(() => balancersNamed(victimName).length === 1, 20_000);
      const recreated = balancersNamed(victimName)[0];
      assertEquals(recreated.labels["hcloud-ccm/service-uid"], victim.metadata!.uid);
      await eventually(
        async () => (await ingress("default", "victim"))[0]?.ip === recreated.public_net.ipv4.ip,
        20_000,
      );

      // The Service the left-behind balancer was made for takes it over.
      const shop = await client.create(SERVICES, service("team-a", "shop", { [`${P}name`]: "shop-lb" }), {
        namespace: "team-a",
      });
      await eventually(async () => (await ingress("team-a", "shop")).length > 0, 20_000);
      const taken = balancersNamed("shop-lb");
      assertEquals(taken.map((b) => b.id), [shopLb.id]);
      assertEquals(taken[0].labels["hcloud-ccm/service-uid"], shop.metadata!.uid);
    } finally {
      await close(ccm);
    }
  },
});
