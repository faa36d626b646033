/**
 * Uploaded certificates in the simulator are described by their PEM, as the real API does.
 */
import { assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY, RENEWED_CERT } from "../tests/fixtures/example_com.ts";
import { X509Certificate } from "node:crypto";

Deno.test("simulator: an uploaded certificate carries its own domains, fingerprint and validity; bad PEM is refused", async () => {
  const t = await startTestSim();
  try {
    const up = await t.api("POST", "/certificates", {
      name: "c",
      certificate: EXAMPLE_CERT,
      private_key: EXAMPLE_KEY,
    });
    const x509 = new X509Certificate(EXAMPLE_CERT);
    assertEquals(up.status, 201);
    assertEquals(up.body.certificate.domain_names, ["example.com"]);
    assertEquals(up.body.certificate.fingerprint, x509.fingerprint256.toLowerCase());
    assertEquals(up.body.certificate.not_valid_after, new Date(x509.validTo).toISOString());

    const garbage = await t.api("POST", "/certificates", {
      name: "bad",
      certificate: "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----",
      private_key: EXAMPLE_KEY,
    });
    assertEquals([garbage.status, garbage.body.error.code, garbage.body.error.details.fields[0].name], [
      422,
      "invalid_input",
      "certificate",
    ]);
    const otherKey = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]))
      .privateKey;
    const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", otherKey));
    const pem = `-----BEGIN PRIVATE KEY-----\n${
      btoa(String.fromCharCode(...der))
    }\n-----END PRIVATE KEY-----\n`;
    const mismatch = await t.api("POST", "/certificates", {
      name: "bad",
      certificate: EXAMPLE_CERT,
      private_key: pem,
    });
    assertEquals([mismatch.status, mismatch.body.error.details.fields[0].name], [422, "private_key"]);
    assertEquals(
      (await t.api("GET", "/certificates")).body.certificates.length,
      1,
      "bad input creates nothing",
    );
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: a service's certificates are replaced in place; the type's certificate limit, redirect only on https, and a redirect's port 80 are enforced", async () => {
  const t = await startTestSim();
  try {
    const ids: number[] = [];
    for (let i = 0; i < 11; i++) {
      const up = await t.api("POST", "/certificates", {
        name: `c${i}`,
        certificate: EXAMPLE_CERT,
        private_key: EXAMPLE_KEY,
      });
      ids.push(up.body.certificate.id);
    }
    const https = (port: number, certificates: number[], redirect = false) => ({
      protocol: "https",
      listen_port: port,
      destination_port: 30000 + port,
      http: { certificates, redirect_http: redirect },
    });
    const created = await t.api("POST", "/load_balancers", {
      name: "lb",
      load_balancer_type: "lb11",
      location: "fsn1",
      services: [https(443, [ids[0]])],
    });
    assertEquals(created.status, 201);
    const lb = created.body.load_balancer.id;
    const action = (name: string, body: unknown) =>
      t.api("POST", `/load_balancers/${lb}/actions/${name}`, body);
    const service = async (port: number) =>
      (await t.api("GET", `/load_balancers/${lb}`)).body.load_balancer.services.find((
        s: { listen_port: number },
      ) => s.listen_port === port);

    // A certificate's content is immutable: an update changes its name and labels, nothing else.
    const renamed = await t.api("PUT", `/certificates/${ids[0]}`, {
      name: "renamed",
      certificate: RENEWED_CERT,
    });
    assertEquals(renamed.status, 200);
    assertEquals([renamed.body.certificate.name, renamed.body.certificate.certificate], [
      "renamed",
      EXAMPLE_CERT,
    ]);

    // Replacing the certificate keeps the service and everything else on it.
    assertEquals(
      (await action("update_service", { listen_port: 443, http: { certificates: [ids[1]] } })).status,
      201,
    );
    assertEquals((await service(443)).http.certificates, [ids[1]]);
    assertEquals((await service(443)).destination_port, 30443);
    const missing = await action("update_service", { listen_port: 443, http: { certificates: [999999] } });
    assertEquals([missing.status, missing.body.error.code], [422, "invalid_input"]);

    // lb11 holds 10 certificates over all its services.
    assertEquals((await action("add_service", https(8443, ids.slice(2, 11)))).status, 201);
    const over = await action("add_service", https(9443, [ids[0]]));
    assertEquals([over.status, over.body.error.code], [403, "resource_limit_exceeded"]);
    assertEquals((await action("delete_service", { listen_port: 8443 })).status, 201);

    // redirect_http: https only; it answers port 80, so nothing else may listen there (either order).
    const onHttp = await action("add_service", {
      protocol: "http",
      listen_port: 8080,
      destination_port: 30080,
      http: { redirect_http: true },
    });
    assertEquals([onHttp.status, onHttp.body.error.code], [422, "invalid_input"]);
    assertEquals(
      (await action("update_service", { listen_port: 443, http: { redirect_http: true } })).status,
      201,
    );
    const busy = await action("add_service", { protocol: "tcp", listen_port: 80, destination_port: 30080 });
    assertEquals([busy.status, busy.body.error.code], [422, "source_port_already_used"]);
    assertEquals(
      (await action("update_service", { listen_port: 443, http: { redirect_http: false } })).status,
      201,
    );
    assertEquals(
      (await action("add_service", { protocol: "tcp", listen_port: 80, destination_port: 30080 })).status,
      201,
    );
    const taken = await action("update_service", { listen_port: 443, http: { redirect_http: true } });
    assertEquals([taken.status, taken.body.error.code], [422, "source_port_already_used"]);
  } finally {
    await t.finish();
  }
});
