import { assert, assertEquals } from "../../../../testing/assert.ts";
import { TlsSecret } from "../../../tls_secret.ts";
import { TlsCertificates, tlsSecretProblem } from "./tls_secrets.ts";
import type { ProviderWarning } from "../../../provider.ts";
import { HcloudClient } from "../../../../hcloud_api/mod.ts";
import { startTestSim } from "../../../../testing/sim_harness.ts";
import { DEFAULT_SIM_TOKEN } from "../../../../hcloud_sim/simulator.ts";
import {
  EXAMPLE_CERT,
  EXAMPLE_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
  RENEWED_CERT,
  RENEWED_KEY,
} from "../../../../tests/fixtures/example_com.ts";

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

Deno.test("TLS Secrets: one upload per Secret and content; two Secrets with the same content never share or sweep each other's", async () => {
  const t = await startTestSim();
  try {
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 });
    const tls = new TlsCertificates(client);
    const warnings: ProviderWarning[] = [];
    const a = await tls.resolve(
      "11111111-aaaa",
      "team-a/web",
      secret(EXAMPLE_CERT, EXAMPLE_KEY),
      "x",
      warnings,
    );
    const b = await tls.resolve(
      "11111111-aaaa",
      "team-b/web",
      secret(EXAMPLE_CERT, EXAMPLE_KEY),
      "x",
      warnings,
    );
    assert(a !== b, "each Secret its own certificate");
    assertEquals(
      await tls.resolve("11111111-aaaa", "team-a/web", secret(EXAMPLE_CERT, EXAMPLE_KEY), "x", warnings),
      a,
    );
    const uploads = () => t.sim.audit.filter((e) => e.route === "POST /certificates").length;
    assertEquals(uploads(), 2, "known content is not uploaded again");
    // Another cluster's (another CCM's) certificate for the same Secret is neither found nor touched.
    await new TlsCertificates(client).resolve(
      "22222222-bbbb",
      "team-a/web",
      secret(EXAMPLE_CERT, EXAMPLE_KEY),
      "x",
      [],
    );
    assertEquals(uploads(), 3);
    await tls.sweep("11111111-aaaa", ["team-a/web"]);
    const left = [...t.sim.world.certificates.keys()].sort((x, y) => x - y);
    assertEquals(left.includes(a), false, "team-a's certificate went with its balancer");
    assertEquals(left.length, 2, "team-b's and the other cluster's stay");
    assert(left.includes(b));
    assertEquals(warnings, []);
  } finally {
    await t.finish();
  }
});

Deno.test("TLS Secrets: the sweep after a start deletes this cluster's unused uploads older than its grace, nothing else", async () => {
  const t = await startTestSim();
  try {
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 });
    const tls = new TlsCertificates(client);
    const ours = await tls.resolve("c1", "team-a/web", secret(EXAMPLE_CERT, EXAMPLE_KEY), "x", []);
    const theirs = await new TlsCertificates(client).resolve(
      "c2",
      "team-a/web",
      secret(EXAMPLE_CERT, EXAMPLE_KEY),
      "x",
      [],
    );
    const outside = (await t.api("POST", "/certificates", {
      name: "hand-made",
      certificate: EXAMPLE_CERT,
      private_key: EXAMPLE_KEY,
    })).body.certificate.id;
    const labels = t.sim.world.certificates.get(ours)!.labels;
    assertEquals([labels["deno-ccm/secret-namespace"], labels["deno-ccm/secret-name"]], ["team-a", "web"]);
    assertEquals(await tls.sweepUnused("c1", 60_000), 0, "younger than the grace: may wait for its swap");
    assertEquals(await tls.sweepUnused("c1", 60_000, Date.now() + 120_000), 1);
    const left = [...t.sim.world.certificates.keys()];
    assertEquals([left.includes(ours), left.includes(theirs), left.includes(outside)], [false, true, true]);
  } finally {
    await t.finish();
  }
});
