import { assertEquals } from "../../testing/assert.ts";
import { cloudProviderId, parseProviderId } from "./provider_id.ts";

Deno.test("provider IDs: exact or refused; an ID beyond 2^53 never names another server", () => {
  assertEquals(parseProviderId("hcloud://42"), { kind: "cloud", id: 42 });
  assertEquals(parseProviderId("hcloud://9007199254740991"), { kind: "cloud", id: 9007199254740991 });
  for (
    const raw of ["hcloud://9007199254740993", "hcloud://9007199254740992", "hcloud://123456789012345678901"]
  ) {
    const parsed = parseProviderId(raw);
    assertEquals(parsed.kind, "foreign", raw);
    assertEquals(parsed.kind === "foreign" && parsed.why.includes("beyond the IDs"), true, raw);
  }
  const aws = parseProviderId("aws:///eu-central-1a/i-0abc");
  assertEquals(
    aws.kind === "foreign" && aws.why,
    "is not a Hetzner Cloud provider ID (hcloud://<server ID>)",
  );
  assertEquals(parseProviderId("hrobot://7").kind, "robot");
  assertEquals(parseProviderId(undefined).kind, "none");
});

Deno.test("provider ID: a Cloud server's ID written as parseProviderId reads it back", () => {
  assertEquals(cloudProviderId(4711), "hcloud://4711");
  assertEquals(parseProviderId(cloudProviderId(4711)), parseProviderId("hcloud://4711"));
});
