/**
 * Keep-your-IP (issue 17, item 8): the official CCM's `public-net-ipv4` / `-ipv6` annotations create
 * the balancer with those Primary IPs, so a Service deleted and recreated keeps its addresses; a
 * change on an existing balancer is a Warning and nothing else; bad values and a conflict with
 * `disable-public-network` are Warnings naming the annotation, and no balancer is created.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { EVENTS, SERVICES } from "../kube/resources.ts";

const P = "load-balancer.hetzner.cloud/";

function service(name: string, annotations: Record<string, string>): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", annotations: { [`${P}location`]: "fsn1", ...annotations } },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ port: 80, protocol: "TCP" }] },
  };
}

Deno.test({
  name: "primary IPs: a recreated Service keeps its addresses; changes and bad values are warnings",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, s, client, close } = await testEnvironment();
    sim.addServer({ name: "n1", location: "fsn1" });
    await registerNode(client, "n1");
    const primary = async (type: string, location = "fsn1") => {
      const r = await s.api("POST", "/primary_ips", {
        name: `keep-${type}-${location}`,
        type,
        assignee_type: "server",
        location,
        auto_delete: false,
      });
      assertEquals(r.status, 201, JSON.stringify(r.body));
      return r.body.primary_ip as { id: number; ip: string };
    };
    const v4 = await primary("ipv4");
    const v6 = await primary("ipv6");
    const elsewhere = await primary("ipv4", "hel1");
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"]);
    const ingress = async (name: string) =>
      ((await client.get(SERVICES, name, { namespace: "default" })).status?.loadBalancer?.ingress ?? [])
        .map((i) => i.ip);
    const warnings = async (name: string) =>
      (await client.list(EVENTS, { namespace: "default" })).items
        .filter((e) => e.involvedObject?.name === name && e.type === "Warning")
        .map((e) => `${e.reason}: ${e.message}`);
    const keep = { [`${P}public-net-ipv4`]: String(v4.id), [`${P}public-net-ipv6`]: String(v6.id) };
    try {
      await client.create(SERVICES, service("web", keep));
      await eventually(async () => (await ingress("web")).length === 2);
      const first = await ingress("web");
      assertEquals(first, [v4.ip, v6.ip.replace(/\/\d+$/, "1")]);
      assertEquals(
        (await warnings("web")).filter((w) => w.includes("public-net")),
        [],
        "the annotations work, so nothing says they are ignored",
      );

      // Deleted and recreated: the same addresses (the Primary IPs outlive the balancer).
      await client.delete(SERVICES, "web", { namespace: "default" });
      await eventually(() => sim.world.loadBalancers.size === 0);
      // The balancer goes before the finalizer does: wait for the Service itself to be gone.
      await eventually(async () =>
        !(await client.list(SERVICES, { namespace: "default" })).items.some((x) => x.metadata?.name === "web")
      );
      assertEquals(sim.world.primaryIps.get(v4.id)?.assignee_id, null, "left unassigned, not deleted");
      await client.create(SERVICES, service("web", keep));
      await eventually(async () => JSON.stringify(await ingress("web")) === JSON.stringify(first));

      // Another Primary IP on the existing balancer: a Warning, nothing changes.
      const current = await client.get(SERVICES, "web", { namespace: "default" });
      current.metadata!.annotations![`${P}public-net-ipv4`] = String(elsewhere.id);
      await client.update(SERVICES, current);
      await eventually(async () => (await warnings("web")).some((w) => w.startsWith("PrimaryIPNotChanged")));
      assertEquals(await ingress("web"), first);

      // Bad input: named in a Warning, no balancer created.
      await client.create(SERVICES, service("bad", { [`${P}public-net-ipv4`]: "four" }));
      await client.create(
        SERVICES,
        service("private", {
          [`${P}public-net-ipv4`]: String(v4.id),
          [`${P}disable-public-network`]: "true",
        }),
      );
      await eventually(async () =>
        (await warnings("bad")).some((w) => w.includes(`${P}public-net-ipv4`) && w.includes("four")) &&
        (await warnings("private")).some((w) => w.includes("disable-public-network"))
      );
      assertEquals(sim.world.loadBalancers.size, 1, "only web's balancer exists");
      assert(sim.world.primaryIps.get(v4.id)?.assignee_id !== null);
    } finally {
      await close(ccm);
    }
  },
});
