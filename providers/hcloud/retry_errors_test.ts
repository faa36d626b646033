import { assert, assertEquals } from "../../testing/assert.ts";
import { K8S_NETWORK, startTestSim } from "../../testing/sim_harness.ts";
import { applySeed } from "../../hcloud_sim/control.ts";
import { providerOnSim } from "../../testing/provider_on_sim.ts";
import { CloudApiError } from "../../hcloud_api/mod.ts";
import { ProviderError, RetryAfterError, TerminalError } from "../errors.ts";
import { reconcilePolicy } from "../../kube/reconcile.ts";
import { BUSY_MS, toRetryable } from "./retry_errors.ts";

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

Deno.test("retry errors: every capability of the provider maps a busy answer the same way, firewall and inventory included", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    applySeed(t.sim, K8S_NETWORK);
    const provider = await providerOnSim(t, {
      HCLOUD_NETWORK: "k8s",
      HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes",
    }, "7b0d0c3e-0000-4000-8000-00000000e770");
    await t.api("POST", "/firewalls", { name: "k8s-nodes", rules: [] });
    const lbs = provider.loadBalancers!;
    const node = { metadata: { name: "n1" }, spec: { providerID: "hcloud://1" } };
    const capabilities: [string, () => Promise<unknown>][] = [
      ["instances", () => provider.instances.instanceExists(node)],
      ["routes", () => provider.routes!.listRoutes("k")],
      ["loadBalancers", () => lbs.nodeTargets!.sync("k", [node])],
      ["inventory", () => lbs.inventory!.drift()],
      ["firewall", () => lbs.firewall!.sync(new AbortController().signal)],
    ];
    for (const [name, call] of capabilities) {
      // Every request answered `locked` (the resource is busy with an action): wait 2 s, then again.
      t.sim.faults.rules.length = 0;
      t.sim.faults.rules.push({
        match: "^(GET|POST|PUT|DELETE) /",
        status: 423,
        code: "locked",
        count: 1_000,
      });
      const err = await call().then(() => undefined, (e) => e);
      assert(err !== undefined, `${name}: no failure`);
      assertEquals(
        [name, reconcilePolicy(err)],
        [name, { afterMs: BUSY_MS }],
        `${name}: ${(err as Error).name}: ${(err as Error).message}`,
      );
    }
  } finally {
    await t.finish();
  }
});
