/**
 * Uploaded certificates in the simulator are described by their PEM, as the real API does.
 */
import { assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY } from "./fixtures/example_com.ts";
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
