/**
 * Per-port settings (`service.deno-ccm.io/port-<port>-<setting>`) against a real kube-apiserver and
 * the simulator: one Service serves https with its own certificate and a redirect on 443 (which
 * answers port 80), https with another certificate on 8443, and tcp on 9000; a certificate swapped
 * on one port is replaced in place; removing the annotations returns to the Service-wide settings;
 * a typo or an impossible combination is a Warning naming annotation and value, and nothing is
 * created or changed in the cloud.
 */
import { lbService } from "../testing/services.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { SERVICES } from "../kube/resources.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY } from "./fixtures/example_com.ts";

const PORT = "service.deno-ccm.io/port-";

const service = (name: string, annotations: Record<string, string>) =>
  lbService(name, annotations, {
    ports: [80, 443, 8443, 9000].map((port) => ({ name: `p${port}`, port, protocol: "TCP" as const })),
  });

Deno.test({
  name:
    "per-port settings: protocols, certificates and a redirect per port; swapped in place; refused before any call",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "n1", location: "fsn1" });
    await registerNode(client, "n1");
    const certificate = (name: string) =>
      [...sim.world.certificates.values()].find((c) => c.name === name)?.id;
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"]);
    try {
      for (const name of ["web", "api"]) {
        const up = await s.api("POST", "/certificates", {
          name,
          certificate: EXAMPLE_CERT,
          private_key: EXAMPLE_KEY,
        });
        assertEquals(up.status, 201);
      }
      const [web, api] = [certificate("web")!, certificate("api")!];
      await client.create(
        SERVICES,
        service("edge", {
          [`${PORT}443-protocol`]: "https",
          [`${PORT}443-http-certificates`]: "web",
          [`${PORT}443-http-redirect-http`]: "true",
          [`${PORT}8443-protocol`]: "https",
          [`${PORT}8443-http-certificates`]: String(api),
          [`${PORT}8443-health-check-protocol`]: "http",
          [`${PORT}8443-health-check-http-path`]: "/ready",
        }),
      );
      const lb = () =>
        [...sim.world.loadBalancers.values()].find((b) => b.labels["deno-ccm/service-name"] === "edge");
      const shape = () =>
        (lb()?.services ?? []).map((
          s,
        ) => [s.listen_port, s.protocol, s.http?.certificates ?? [], !!s.http?.redirect_http])
          .sort((a, b) => (a[0] as number) - (b[0] as number));
      await eventually(() => shape().length === 3, 30_000);
      assertEquals(shape(), [
        [443, "https", [web], true],
        [8443, "https", [api], false],
        [9000, "tcp", [], false],
      ], "port 80 is the redirect's; 9000 keeps the Service-wide tcp");
      const check = lb()!.services.find((s) => s.listen_port === 8443)!.health_check;
      assertEquals([check.protocol, check.http?.path], ["http", "/ready"]);

      // The Node's server carries the cluster's target label (written by the node sync, apart from the
      // balancer's creation): what follows counts only the swap.
      await eventually(() =>
        [...sim.world.servers.values()].every((srv) => srv.labels["deno-ccm/lb-target"])
      );

      // A new certificate on 443: the service is updated in place (one call), nothing else moves.
      const swapped = sim.audit.length;
      await client.patch(SERVICES, "edge", "merge", {
        metadata: { annotations: { [`${PORT}443-http-certificates`]: "api" } },
      }, { namespace: "default" });
      await eventually(
        () => JSON.stringify(shape()[0]) === JSON.stringify([443, "https", [api], true]),
        20_000,
      );
      const writes = () => sim.audit.slice(swapped).filter((e) => e.method !== "GET").map((e) => e.route);
      assertEquals(writes(), ["POST /load_balancers/{id}/actions/update_service"]);

      // Without per-port annotations: the official CCM's behaviour (tcp on every port, 80 included).
      const cleared: Record<string, null> = {};
      for (
        const key of Object.keys(
          (await client.get(SERVICES, "edge", { namespace: "default" })).metadata!.annotations!,
        )
      ) {
        if (key.startsWith(PORT)) cleared[key] = null;
      }
      await client.patch(SERVICES, "edge", "merge", { metadata: { annotations: cleared } }, {
        namespace: "default",
      });
      await eventually(
        () =>
          JSON.stringify(shape()) === JSON.stringify([80, 443, 8443, 9000].map((p) => [p, "tcp", [], false])),
        20_000,
      );

      // Bad input: a typo and a certificate on a tcp port; nothing is created or changed.
      const before = sim.audit.length;
      await client.create(SERVICES, service("typo", { [`${PORT}443-protokol`]: "https" }));
      await client.create(SERVICES, service("tcp-cert", { [`${PORT}9000-http-certificates`]: "web" }));
      await eventually(async () =>
        (await eventsOf(client, "typo")).some((e) => e.includes("SyncLoadBalancerFailed"))
      );
      await eventually(async () =>
        (await eventsOf(client, "tcp-cert")).some((e) => e.includes("SyncLoadBalancerFailed"))
      );
      const typo = (await eventsOf(client, "typo")).find((e) => e.includes("SyncLoadBalancerFailed"))!;
      assert(typo.includes(`annotation ${PORT}443-protokol: "https" is not a per-port setting`), typo);
      const tcpCert = (await eventsOf(client, "tcp-cert")).find((e) => e.includes("SyncLoadBalancerFailed"))!;
      assert(
        tcpCert.includes(`annotation ${PORT}9000-http-certificates: "web" needs protocol https on port 9000`),
        tcpCert,
      );
      assertEquals(
        sim.audit.slice(before).filter((e) => e.method !== "GET"),
        [],
        "no cloud write for either",
      );
    } finally {
      await close(ccm);
    }
  },
});
