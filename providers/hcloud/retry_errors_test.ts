import { assertEquals, assertRejects } from "../../testing/assert.ts";
import { CloudApiError } from "../../hcloud_api/mod.ts";
import { ProviderError, RetryAfterError, TerminalError } from "../errors.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { mapRetryableErrors, toRetryable } from "./retry_errors.ts";

Deno.test("retry errors: busy and rate-limited answers become fixed delays, the rest stays as it is", () => {
  const policy = (err: unknown) => reconcilePolicy(toRetryable(err));
  assertEquals(
    policy(
      new CloudApiError("slow down", { status: 429, code: "rate_limit_exceeded", retryAfterSeconds: 3 }),
    ),
    {
      afterMs: 3000,
    },
  );
  assertEquals(policy(new CloudApiError("busy", { status: 423, code: "locked" })), { afterMs: 2000 });
  assertEquals(policy(new CloudApiError("busy", { status: 409, code: "conflict" })), { afterMs: 2000 });
  assertEquals(policy(new CloudApiError("boom", { status: 500, code: "server_error" })), undefined);
  // A project limit frees up when someone deletes something: a long wait, not a 5 s backoff (Q3).
  assertEquals(
    policy(new CloudApiError("limit", { status: 403, code: "resource_limit_exceeded" })),
    { afterMs: 600_000 },
  );
  assertEquals(policy(new TerminalError("bad")), "forget");
  // Inside a ProviderError: mapped, with the warnings and the message kept.
  const wrapped = toRetryable(
    new ProviderError(new CloudApiError("lb is locked", { status: 423, code: "locked" }), {
      warnings: [{ reason: "R", message: "m" }],
    }),
  ) as ProviderError;
  assertEquals([wrapped.cause instanceof RetryAfterError, wrapped.message, wrapped.warnings.length], [
    true,
    "lb is locked",
    1,
  ]);
});

Deno.test("retry errors: a wrapped provider part's methods reject with the mapped error", async () => {
  class Part {
    value = 1;
    async busy(): Promise<void> {
      await Promise.resolve();
      throw new CloudApiError("locked", { status: 423, code: "locked" });
    }
    plain(): number {
      return this.value;
    }
  }
  const part = mapRetryableErrors(new Part());
  assertEquals(part.plain(), 1);
  const err = await assertRejects(() => part.busy(), RetryAfterError);
  assertEquals(err.retryAfterMs, 2000);
});
