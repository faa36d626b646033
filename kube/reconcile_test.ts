import { assertEquals } from "../testing/assert.ts";
import { reconcilePolicy, RetryAfterError, rootCause, TerminalError, WrappedError } from "./reconcile.ts";
import { KubeApiError } from "./errors.ts";

Deno.test("reconcile policy: terminal waits for a change, busy and conflicting retry soon, the rest backs off", () => {
  assertEquals(reconcilePolicy(new TerminalError("bad annotation")), "forget");
  assertEquals(reconcilePolicy(new RetryAfterError("later", 1234)), { afterMs: 1234 });
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

Deno.test("reconcile policy: a wrapped error is retried as its cause, with the cause's message", () => {
  const terminal = new TerminalError("annotation x: bad value");
  const wrapped = new WrappedError(new WrappedError(terminal));
  assertEquals(reconcilePolicy(wrapped), "forget");
  assertEquals(rootCause(wrapped), terminal);
  assertEquals([wrapped.message, wrapped.name], ["annotation x: bad value", "TerminalError"]);
  assertEquals(reconcilePolicy(new WrappedError(new RetryAfterError("busy", 50))), { afterMs: 50 });
});
