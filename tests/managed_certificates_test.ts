/**
 * Managed certificates have a lifecycle (HCCM #596, #709), against a real apiserver and the simulator:
 * a Service recreated under the same certificate name takes over the certificate its predecessor left
 * instead of failing on `uniqueness_error`; a name held by a live Service or for other domains is a
 * Warning, never a takeover; a failed issuance is a Warning naming the domain; the certificate goes
 * with the Service's balancer unless another balancer uses it.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NODES, SERVICES } from "../kube/resources.ts";

const P = "load-balancer.hetzner.cloud/";
const UID_LABEL = "hcloud-ccm/service-uid";

function service(name: string, certName: string, domains: string): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace: "default",
      annotations: {
        [`${P}location`]: "fsn1",
        [`${P}protocol`]: "https",
        [`${P}certificate-type`]: "managed",
        [`${P}http-managed-certificate-name`]: certName,
        [`${P}http-managed-certificate-domains`]: domains,
      },
    },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ port: 443, protocol: "TCP" }] },
  };
}

Deno.test({
  name: "managed certificates: taken over on recreation, guarded, failures named, deleted with the balancer",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { cluster, s, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "n1", location: "fsn1" });
    await registerNode(client, "n1");
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"]);
    const certificates = () => [...sim.world.certificates.values()];
    const certNamed = (name: string) => certificates().find((c) => c.name === name);
    const uidOf = async (name: string) =>
      (await client.get(SERVICES, name, { namespace: "default" })).metadata!.uid!;
    const lbOf = async (name: string) => {
      const uid = await uidOf(name);
      return [...sim.world.loadBalancers.values()].find((lb) => lb.labels[UID_LABEL] === uid);
    };
    const warned = (name: string, reason: string, text: string) =>
      eventually(async () =>
        (await eventsOf(client, name)).some((e) => e.startsWith(`Warning ${reason}`) && e.includes(text))
      );
    try {
      await eventually(async () => !!(await client.get(NODES, "n1")).spec?.providerID);

      await t.step(
        "a certificate left by a deleted Service is taken over, not a uniqueness error",
        async () => {
          // As the official CCM leaves it: labelled for a Service that no longer exists.
          const left = await s.api("POST", "/certificates", {
            name: "shop-cert",
            type: "managed",
            domain_names: ["shop.example.com"],
            labels: { [UID_LABEL]: "0a6e7e0c-0000-4000-8000-000000000001" },
          });
          assertEquals(left.status, 201);
          await client.create(SERVICES, service("shop", "shop-cert", "shop.example.com"));
          await eventually(async () => (await lbOf("shop"))?.services[0]?.http?.certificates?.length === 1);
          const id = (left.body as { certificate: { id: number } }).certificate.id;
          assertEquals((await lbOf("shop"))!.services[0].http!.certificates, [id]);
          assertEquals(certificates().filter((c) => c.name === "shop-cert").length, 1);
          assertEquals(certNamed("shop-cert")!.labels[UID_LABEL], await uidOf("shop"));
        },
      );

      await t.step(
        "a name held by a live Service, or for other domains, is a Warning and no takeover",
        async () => {
          await client.create(SERVICES, service("copy", "shop-cert", "shop.example.com"));
          await warned("copy", "SyncLoadBalancerFailed", "belongs to another Service");
          await client.create(SERVICES, service("other", "shop-cert", "other.example.com"));
          await warned("other", "SyncLoadBalancerFailed", "exists for shop.example.com");
          assertEquals(certNamed("shop-cert")!.labels[UID_LABEL], await uidOf("shop"));
          assertEquals(await lbOf("copy"), undefined);
          assertEquals(await lbOf("other"), undefined);
        },
      );

      await t.step("a failed issuance is a Warning naming the domain", async () => {
        await client.create(SERVICES, service("broken", "broken-cert", "shop.invalid"));
        await warned("broken", "ManagedCertificateFailed", "shop.invalid");
      });

      await t.step("deleted with the balancer; one another balancer uses is kept", async () => {
        const shopCert = certNamed("shop-cert")!.id;
        // A balancer outside Kubernetes also serves the broken certificate: it must stay.
        const brokenCert = certNamed("broken-cert")!.id;
        const foreign = await s.api("POST", "/load_balancers", {
          name: "outside",
          load_balancer_type: "lb11",
          location: "fsn1",
          services: [{
            protocol: "https",
            listen_port: 443,
            destination_port: 8443,
            proxyprotocol: false,
            http: { certificates: [brokenCert] },
          }],
        });
        assertEquals(foreign.status, 201, JSON.stringify(foreign.body));
        for (const name of ["shop", "broken", "copy", "other"]) {
          await client.delete(SERVICES, name, { namespace: "default" });
        }
        await eventually(async () =>
          (await client.list(SERVICES, { namespace: "default" })).items.length === 1
        );
        await eventually(() => !sim.world.certificates.has(shopCert));
        assert(sim.world.certificates.has(brokenCert), "a certificate another balancer uses stays");
      });
    } finally {
      await close(ccm);
    }
  },
});
