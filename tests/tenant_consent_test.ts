/**
 * Crossing a namespace needs consent a tenant cannot give alone (issue 33, probe N4, N5, N12): with
 * HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES listing no namespace, a Service may name an uploaded
 * certificate, a Primary IP, or a balancer to adopt or attach to only when the object's owner labelled
 * it `deno-ccm/namespace=<its namespace>` in the cloud. A refusal names the object and both ways to
 * consent, and changes nothing in the cloud.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { EVENTS, NAMESPACES, NODES, SERVICES } from "../kube/resources.ts";

const P = "load-balancer.hetzner.cloud/";
const NS = "team-b";
const FIXTURES = new URL("fixtures/", import.meta.url);
const CERT = Deno.readTextFileSync(new URL("example_com_cert.pem", FIXTURES));
const KEY = Deno.readTextFileSync(new URL("example_com_key.pem", FIXTURES));

function service(name: string, annotations: Record<string, string>, port = 443): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: NS, annotations },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ port, protocol: "TCP" }] },
  };
}

Deno.test({
  name: "tenant consent: another team's certificate, Primary IP or balancer needs its owner's label",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    s.sim.addServer({ name: "w1", location: "fsn1" });
    await registerNode(client, "w1");
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    const cert = (name: string, labels: Record<string, string>) =>
      s.api("POST", "/certificates", { name, certificate: CERT, private_key: KEY, labels });
    const teamA = (await cert("team-a-cert", {})).body.certificate;
    await cert("team-b-cert", { "deno-ccm/namespace": NS });
    const ip = (await s.api("POST", "/primary_ips", {
      name: "team-a-ip",
      type: "ipv4",
      assignee_type: "server",
      location: "fsn1",
    })).body.primary_ip;
    const made = (name: string, labels: Record<string, string>) =>
      s.api("POST", "/load_balancers", { name, load_balancer_type: "lb11", location: "fsn1", labels });
    await made("team-a-tf", {});
    await made("team-b-tf", { "deno-ccm/namespace": NS });
    const ccm = await startCcm(cluster, s.sim, ["--controllers=cloud-node,service"], {
      HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
      HCLOUD_LOAD_BALANCERS_TYPE: "lb11",
      HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES: "",
    });
    const failure = async (name: string) =>
      (await client.list(EVENTS, { namespace: NS, fieldSelector: `involvedObject.name=${name}` })).items
        .find((e) => e.reason === "SyncLoadBalancerFailed")?.message ?? "";
    const served = async (name: string) =>
      ((await client.get(SERVICES, name, { namespace: NS })).status?.loadBalancer?.ingress ?? []).length > 0;
    try {
      await eventually(async () => !!(await client.get(NODES, "w1")).spec?.providerID, 20_000);
      const before = s.sim.world.loadBalancers.size;
      const refused: [string, Record<string, string>, number?][] = [
        ["by-name", { [`${P}protocol`]: "https", [`${P}http-certificates`]: "team-a-cert" }],
        ["by-id", { [`${P}protocol`]: "https", [`${P}http-certificates`]: String(teamA.id) }],
        ["their-ip", { [`${P}public-net-ipv4`]: String(ip.id) }, 80],
        ["adopt", { [`${P}name`]: "team-a-tf", [`${P}adopt-existing`]: "true" }, 80],
        ["attach", { [`${P}attach-to`]: "team-a-tf" }, 80],
      ];
      for (const [name, annotations, port] of refused) {
        await client.create(SERVICES, service(name, annotations, port), { namespace: NS });
      }
      await client.create(
        SERVICES,
        service("own-cert", { [`${P}protocol`]: "https", [`${P}http-certificates`]: "team-b-cert" }),
        { namespace: NS },
      );
      await client.create(SERVICES, service("own-tf", { [`${P}attach-to`]: "team-b-tf" }, 80), {
        namespace: NS,
      });
      for (const [name] of refused) {
        await eventually(async () => (await failure(name)).includes("has no consent"), 20_000);
        const message = await failure(name);
        assert(message.includes(`deno-ccm/namespace=${NS}`), message);
        assert(message.includes("HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES"), message);
      }
      await eventually(() => served("own-cert"), 20_000);
      await eventually(() => served("own-tf"), 20_000);
      // The refused ones changed nothing: one new balancer (own-cert's), team-a's untouched, the IP free.
      assertEquals(s.sim.world.loadBalancers.size, before + 1);
      const teamATf = [...s.sim.world.loadBalancers.values()].find((b) => b.name === "team-a-tf")!;
      assertEquals([teamATf.services.length, teamATf.targets.length], [0, 0]);
      assertEquals(s.sim.world.primaryIps.get(ip.id)?.assignee_id ?? null, null);
    } finally {
      await close(ccm);
    }
  },
});
