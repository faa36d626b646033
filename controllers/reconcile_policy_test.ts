import { assertEquals } from "../testing/assert.ts";
import { reconcilePolicy } from "./reconcile_policy.ts";
import { CloudApiError, RetryAfterError, TerminalError } from "../providers/errors.ts";
import { KubeApiError } from "../kube/errors.ts";

Deno.test("reconcile policy: terminal waits for a change, busy and conflicting retry soon, the rest backs off", () => {
  assertEquals(reconcilePolicy(new TerminalError("bad annotation")), "forget");
  assertEquals(reconcilePolicy(new RetryAfterError("later", 1234)), { afterMs: 1234 });
  assertEquals(
    reconcilePolicy(
      new CloudApiError("slow down", { status: 429, code: "rate_limit_exceeded", retryAfterSeconds: 3 }),
    ),
    { afterMs: 3000 },
  );
  assertEquals(reconcilePolicy(new CloudApiError("busy", { status: 423, code: "locked" })), {
    afterMs: 2000,
  });
  assertEquals(reconcilePolicy(new CloudApiError("boom", { status: 500, code: "server_error" })), undefined);
  assertEquals(reconcilePolicy(new Error("network")), undefined);
  assertEquals(reconcilePolicy(new KubeApiError("PATCH /api/v1/nodes/a", 409, "Conflict", "changed")), {
    afterMs: 200,
  });
  assertEquals(
    reconcilePolicy(
      new KubeApiError("GET /api/v1/nodes", 429, "TooManyRequests", "x", { retryAfterSeconds: 2 }),
    ),
    { afterMs: 2000 },
  );
});
