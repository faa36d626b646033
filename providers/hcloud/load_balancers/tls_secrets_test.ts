import { assert, assertEquals } from "../../../testing/assert.ts";
import { TlsSecret } from "../../tls_secret.ts";
import { tlsSecretProblem } from "./tls_secrets.ts";
import {
  EXAMPLE_CERT,
  EXAMPLE_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
  RENEWED_CERT,
  RENEWED_KEY,
} from "../../../tests/fixtures/example_com.ts";

const secret = (cert: string, key: string) => new TlsSecret("default/web-tls", cert, key, "1");

Deno.test("TLS Secrets: what can be served, and why not (the key never quoted)", () => {
  assertEquals(tlsSecretProblem(secret(EXAMPLE_CERT, EXAMPLE_KEY)), undefined);
  assertEquals(tlsSecretProblem(secret(RENEWED_CERT, RENEWED_KEY)), undefined);
  const cases: [TlsSecret, string][] = [
    [secret("", ""), "holds no certificate and key"],
    [secret(EXAMPLE_CERT, ""), "holds no certificate and key"],
    [
      secret("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----", EXAMPLE_KEY),
      "tls.crt is not a PEM",
    ],
    [
      secret(EXAMPLE_CERT, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"),
      "tls.key is not a PEM",
    ],
    [secret(RENEWED_CERT, EXAMPLE_KEY), "tls.key is not the key of the certificate"],
    [secret(EXPIRED_CERT, EXPIRED_KEY), "tls.crt expired on 2020-02-01T00:00:00.000Z"],
  ];
  for (const [s, why] of cases) {
    const problem = tlsSecretProblem(s) ?? "";
    assert(problem.includes(why), `${why}: got ${problem}`);
    assert(!problem.includes("PRIVATE"), problem);
  }
  // Not yet valid: judged against the time given.
  assert(
    tlsSecretProblem(secret(EXAMPLE_CERT, EXAMPLE_KEY), Date.parse("2000-01-01"))?.includes(
      "not valid before",
    ),
  );
});

Deno.test("TLS Secrets: the key does not show when the object is logged, inspected or serialized", () => {
  const s = secret(EXAMPLE_CERT, EXAMPLE_KEY);
  const body = EXAMPLE_KEY.split("\n")[1];
  for (
    const shown of [JSON.stringify(s), String(s), Deno.inspect(s), Deno.inspect({ nested: [s] }), `${s}`]
  ) {
    assert(!shown.includes(body), shown);
    assert(shown.includes("default/web-tls"), shown);
  }
  assertEquals(s.privateKey(), EXAMPLE_KEY, "the one who uploads it still gets it");
});
