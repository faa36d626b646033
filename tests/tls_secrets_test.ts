/**
 * Certificates from TLS Secrets against a real kube-apiserver and the simulator: a labelled
 * `kubernetes.io/tls` Secret's certificate is uploaded once (labelled as this cluster's, for that
 * Secret and content) and served on the https port; a renewal is uploaded, swapped in and the old one
 * deleted; an expired or mismatched Secret is a Warning and the running certificate stays; an
 * unlabelled Secret is never read; a CCM that dies between upload and swap leaks nothing; the
 * certificates go with the balancer; the private key appears in no log line or event. The CCM runs
 * with the chart's ClusterRole (tlsSecrets.enabled) as its only rights.
 */
import type { Secret } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { lbService } from "../testing/services.ts";
import { SECRETS, SERVICES } from "../kube/resources.ts";
import { setupLogging } from "../lib/log.ts";
import { chartRoleConnection } from "../testing/rbac.ts";
import {
  EXAMPLE_CERT,
  EXAMPLE_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
  RENEWED_CERT,
  RENEWED_KEY,
} from "./fixtures/example_com.ts";

const PORT = "service.deno-ccm.io/port-";
const LABEL = "deno-ccm.io/load-balancer-tls";
const ENV = { HCLOUD_LOAD_BALANCERS_TLS_SECRETS: "true" };
const ARGS = ["--controllers=cloud-node,service", "--drift-repair-period=0"];

function secret(name: string, cert: string, key: string, labelled = true): Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "default", labels: labelled ? { [LABEL]: "true" } : {} },
    type: "kubernetes.io/tls",
    stringData: { "tls.crt": cert, "tls.key": key },
  } as Secret;
}

/** The base64 body of a PEM key: what must never be shown. */
const keyBody = (pem: string) => pem.split("\n").filter((l) => l && !l.startsWith("-----")).join("");

Deno.test({
  name:
    "TLS Secrets: uploaded once, renewed by swap, bad content keeps the running certificate, nothing leaks",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    const lines: string[] = [];
    setupLogging({ level: "debug", format: "json", write: (l) => lines.push(l) });
    sim.addServer({ name: "n1", location: "fsn1" });
    await registerNode(client, "n1");
    // The CCM runs with exactly the chart's ClusterRole with tlsSecrets.enabled: least privilege, proven.
    const identity = await chartRoleConnection(cluster, ["tlsSecrets.enabled=true"]);
    let ccm = await startCcm(cluster, sim, ARGS, ENV, identity);
    try {
      await client.create(SECRETS, secret("web-tls", EXAMPLE_CERT, EXAMPLE_KEY), { namespace: "default" });
      await client.create(SECRETS, secret("raw-tls", EXAMPLE_CERT, EXAMPLE_KEY, false), {
        namespace: "default",
      });
      const ports = [{ name: "http", port: 80, protocol: "TCP" as const }, {
        name: "https",
        port: 443,
        protocol: "TCP" as const,
      }];
      await client.create(
        SERVICES,
        lbService("edge", { [`${PORT}443-protocol`]: "https", [`${PORT}443-tls-secret`]: "web-tls" }, {
          ports,
        }),
      );
      const lb = () =>
        [...sim.world.loadBalancers.values()].find((b) => b.labels["deno-ccm/service-name"] === "edge");
      const served = () => lb()?.services.find((s) => s.listen_port === 443)?.http?.certificates ?? [];
      const ours = () => [...sim.world.certificates.values()].filter((c) => c.labels["deno-ccm/tls-secret"]);
      await eventually(() => served().length === 1, 30_000);
      const first = sim.world.certificates.get(served()[0])!;
      assertEquals(first.certificate?.trim(), EXAMPLE_CERT.trim(), "the Secret's certificate is served");
      assertEquals([first.type, first.labels["deno-ccm/cluster-id"] !== undefined], ["uploaded", true]);
      assertEquals(ours().length, 1);

      // The Node's server carries the cluster's target label (the node sync's write, apart from the
      // balancer's creation): what follows counts only the renewal.
      await eventually(() =>
        [...sim.world.servers.values()].every((srv) => srv.labels["deno-ccm/lb-target"])
      );
      // A renewal: one upload, the swap, the old one deleted.
      const renewal = sim.audit.length;
      await client.patch(SECRETS, "web-tls", "merge", {
        stringData: { "tls.crt": RENEWED_CERT, "tls.key": RENEWED_KEY },
      }, {
        namespace: "default",
      });
      await eventually(() => served()[0] !== first.id && ours().length === 1, 30_000);
      const renewed = sim.world.certificates.get(served()[0])!;
      assertEquals(renewed.certificate?.trim(), RENEWED_CERT.trim());
      const calls = sim.audit.slice(renewal).map((e) => e.route);
      assertEquals(calls.filter((c) => !c.startsWith("GET")), [
        "POST /certificates",
        "POST /load_balancers/{id}/actions/update_service",
        "DELETE /certificates/{id}",
      ]);
      console.log(`calls per renewal: ${calls.length} (${calls.join(", ")})`);

      // Bad content: a Warning naming the Secret and why; the renewed certificate stays in service.
      const warned = async (why: string) =>
        (await eventsOf(client, "edge")).some((e) => e.includes("TlsSecretInvalid") && e.includes(why));
      await client.patch(SECRETS, "web-tls", "merge", {
        stringData: { "tls.crt": EXPIRED_CERT, "tls.key": EXPIRED_KEY },
      }, {
        namespace: "default",
      });
      await eventually(() => warned("Secret default/web-tls: tls.crt expired on 2020-02-01"), 20_000);
      await client.patch(SECRETS, "web-tls", "merge", {
        stringData: { "tls.crt": RENEWED_CERT, "tls.key": EXAMPLE_KEY },
      }, {
        namespace: "default",
      });
      await eventually(() => warned("tls.key is not the key of the certificate in tls.crt"), 20_000);
      assertEquals([served(), ours().length], [[renewed.id], 1], "the running certificate stays");

      // An unlabelled Secret is never offered: nothing is created for a Service naming it.
      const before = sim.audit.length;
      await client.create(
        SERVICES,
        lbService("raw", { [`${PORT}443-protocol`]: "https", [`${PORT}443-tls-secret`]: "raw-tls" }, {
          ports,
        }),
      );
      await eventually(async () =>
        (await eventsOf(client, "raw")).some((e) =>
          e.includes("Secret default/raw-tls: not found, or not labelled deno-ccm.io/load-balancer-tls=true")
        )
      );
      assertEquals(sim.audit.slice(before).filter((e) => e.method !== "GET"), [], "no cloud write for it");
      await client.delete(SERVICES, "raw", { namespace: "default" });

      // The CCM dies between upload and swap: the next one finds the upload, swaps, deletes the old one.
      sim.control.setFaults({ rules: [{ match: "update_service", status: 503, code: "unavailable" }] });
      await client.patch(SECRETS, "web-tls", "merge", {
        stringData: { "tls.crt": EXAMPLE_CERT, "tls.key": EXAMPLE_KEY },
      }, {
        namespace: "default",
      });
      await eventually(() => ours().length === 2, 20_000);
      await ccm.stop();
      sim.control.setFaults({ rules: [] });
      const restart = sim.audit.length;
      ccm = await startCcm(cluster, sim, ARGS, ENV, identity);
      await eventually(() => ours().length === 1 && served()[0] !== renewed.id, 30_000);
      assertEquals(sim.world.certificates.get(served()[0])!.certificate?.trim(), EXAMPLE_CERT.trim());
      assertEquals(
        sim.audit.slice(restart).filter((e) => e.method === "POST" && e.route === "POST /certificates")
          .length,
        0,
        "found again by its content, not uploaded twice",
      );

      // The certificates go with the balancer.
      await client.delete(SERVICES, "edge", { namespace: "default" });
      await eventually(() => lb() === undefined && ours().length === 0, 30_000);

      // The private key was never shown.
      const events = [...await eventsOf(client, "edge"), ...await eventsOf(client, "raw")].join("\n");
      for (const key of [EXAMPLE_KEY, RENEWED_KEY, EXPIRED_KEY]) {
        const body = keyBody(key);
        assert(!lines.some((l) => l.includes(body.slice(0, 40))), "a log line shows a private key");
        assert(!events.includes(body.slice(0, 40)), "an event shows a private key");
      }
      // The capture saw the uploads themselves (debug level, every logger).
      assert(lines.filter((l) => l.includes("uploaded certificate")).length >= 3, lines.join("\n"));
    } finally {
      await close(ccm);
    }
  },
});
