import { assert, assertEquals } from "../../testing/assert.ts";
import { Credentials } from "./credentials.ts";
import { quietLogs } from "../../testing/helpers.ts";

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
  assertEquals(c.token(), "old-token");
  assertEquals(reads, 0, "not due yet");
  content = "new-token";
  // A 401 for the old token: the file is read at once and holds another token, so resend.
  assertEquals(c.answered(401, "old-token"), true);
  assertEquals(c.token(), "new-token");
  assertEquals(c.problem(), undefined);
  // The new token is rejected as well: nothing new to send, the problem is reported.
  assertEquals(c.answered(401, "new-token"), false);
  const problem = c.problem()!;
  assert(problem.includes("401") && problem.includes("/etc/hetzner/token"), problem);
  assert(!problem.includes("new-token") && !problem.includes("old-token"), "never the token");
  // A success with the current token clears it; one with a stale token does not.
  c.answered(200, "old-token");
  assert(c.problem());
  c.answered(200, "new-token");
  assertEquals(c.problem(), undefined);
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
