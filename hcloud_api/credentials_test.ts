import { assert, assertEquals } from "../testing/assert.ts";
import { Credentials } from "./credentials.ts";
import { quietLogs } from "../testing/helpers.ts";
import { redact } from "../lib/log.ts";

Deno.test("credentials: the token file is read again when due and at once after a 401", () => {
  quietLogs();
  let content = "old-token\n";
  let reads = 0;
  const c = new Credentials({
    token: "old-token",
    file: "/etc/hetzner/token",
    recheckMs: 60_000,
    readFile: () => (reads++, content),
  });
  let changes = 0;
  c.onChange(() => changes++);
  assertEquals(c.token(), "old-token");
  assertEquals(reads, 0, "not due yet");
  content = "new-token";
  // A 401 for the old token: the file is read at once and holds another token, so resend.
  assertEquals(c.answered(401, "old-token"), true);
  assertEquals(c.token(), "new-token");
  assertEquals(c.problem(), undefined);
  assertEquals(changes, 1, "a new token in use is a change");
  // The new token is rejected as well: nothing new to send, the problem is reported.
  assertEquals(c.answered(401, "new-token"), false);
  const problem = c.problem()!;
  assert(problem.includes("401") && problem.includes("/etc/hetzner/token"), problem);
  assert(!problem.includes("new-token") && !problem.includes("old-token"), "never the token");
  // A success with the current token clears it; one with a stale token does not.
  c.answered(200, "old-token");
  assert(c.problem());
  assertEquals(changes, 1);
  c.answered(200, "new-token");
  assertEquals(c.problem(), undefined);
  assertEquals(changes, 2, "the API accepting the token again is a change");
  c.answered(200, "new-token");
  assertEquals(changes, 2, "further successes are not");
});

Deno.test("credentials: HCLOUD_TOKEN (no file) is never re-read; an unreadable file keeps the token", () => {
  quietLogs();
  const fixed = new Credentials({ token: "t", readFile: () => "other" });
  assertEquals(fixed.answered(401, "t"), false);
  assertEquals(fixed.token(), "t");
  assert(fixed.problem()!.includes("update HCLOUD_TOKEN"));
  const unreadable = new Credentials({
    token: "t",
    file: "/missing",
    recheckMs: 0,
    readFile: () => {
      throw new Error("No such file");
    },
  });
  assertEquals(unreadable.token(), "t");
});

Deno.test("credentials: a token file with a second line is refused, redacted, and the old token kept", () => {
  quietLogs();
  const rotated = "r".repeat(64);
  let content = "old-token-123";
  const c = new Credentials({
    token: "old-token-123",
    file: "/etc/hetzner/token",
    recheckMs: 0,
    readFile: () => content,
  });
  content = `${rotated}\n# rotated by ops on 2026-11-25`;
  assertEquals(c.token(), "old-token-123");
  const problem = c.problem()!;
  assert(
    problem.includes("whitespace or a control character") && problem.includes("more than one line"),
    problem,
  );
  assert(!problem.includes(rotated), "never the token");
  assertEquals(redact(`Bearer ${rotated}`), "Bearer [REDACTED]", "every token read is a secret at once");
  // The file is fixed: the old token was never replaced, the new one is used once well formed.
  content = rotated;
  assertEquals(c.token(), rotated);
  assertEquals(c.problem(), undefined);
});

Deno.test("credentials: with a verifier, a rotated token is used only once it sees this project", async () => {
  quietLogs();
  let content = "token-a-123456";
  const verdicts = new Map<string, string | undefined | Error>([
    ["token-of-b-123", "it does not see network 7 (HCLOUD_NETWORK): a token of another project?"],
    ["token-flaky-12", new Error("connection refused")],
    ["token-a-rotated", undefined],
  ]);
  const c = new Credentials({ token: "token-a-123456", file: "/t", recheckMs: 0, readFile: () => content });
  c.verifier = (token) => {
    const v = verdicts.get(token);
    return v instanceof Error ? Promise.reject(v) : Promise.resolve(v);
  };
  const settle = () => new Promise((r) => setTimeout(r, 0));

  content = "token-of-b-123";
  assertEquals(c.token(), "token-a-123456", "not used before the check");
  await settle();
  assertEquals(c.token(), "token-a-123456");
  assert(c.problem()!.includes("does not see network 7"), c.problem());
  assert(!c.problem()!.includes("token-of-b-123"));

  content = "token-flaky-12";
  c.token();
  await settle();
  assertEquals(c.token(), "token-a-123456", "a check that could not be made changes nothing");

  content = "token-a-rotated";
  c.token();
  await settle();
  assertEquals(c.token(), "token-a-rotated");
  assertEquals(c.problem(), undefined);
});
