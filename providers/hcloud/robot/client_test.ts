import { assert, assertEquals, assertRejects } from "../../../testing/assert.ts";
import { RobotClient } from "./client.ts";
import { CloudApiError } from "../../../hcloud_api/mod.ts";

function client(answers: Response[], seen: Request[] = []) {
  return new RobotClient({
    endpoint: "http://robot.test",
    user: "u",
    password: "secret-pw",
    rateLimitWaitMs: 60_000,
    fetch: (r) => {
      seen.push(r);
      return Promise.resolve(answers.shift()!);
    },
  });
}
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });

Deno.test("robot client: Basic auth, the server list mapped, an unknown number is undefined", async () => {
  const seen: Request[] = [];
  const c = client([
    json(200, [{
      server: {
        server_number: 7,
        server_name: "bm",
        server_ip: "198.51.100.7",
        server_ipv6_net: null,
        product: "AX41",
        dc: "FSN1-DC1",
      },
    }]),
    json(404, { error: { status: 404, code: "SERVER_NOT_FOUND", message: "no" } }),
  ], seen);
  assertEquals(await c.servers(), [{
    number: 7,
    name: "bm",
    ipv4: "198.51.100.7",
    product: "AX41",
    dc: "FSN1-DC1",
  }]);
  assertEquals(await c.server(8), undefined);
  assertEquals(seen[0].headers.get("authorization"), `Basic ${btoa("u:secret-pw")}`);
});

Deno.test("robot client: 401 is a problem naming the cause, never the password; a rate limit holds calls back", async () => {
  const seen: Request[] = [];
  const c = client([
    json(401, { error: { status: 401, code: "UNAUTHORIZED", message: "Unauthorized" } }),
    json(403, { error: { status: 403, code: "RATE_LIMIT_EXCEEDED", message: "Rate limit exceeded" } }),
  ], seen);
  const err = await assertRejects(() => c.servers(), CloudApiError);
  assert(!err.message.includes("secret-pw"));
  assert(c.problem()?.includes("401") && !c.problem()!.includes("secret-pw"), c.problem());
  await assertRejects(() => c.servers(), CloudApiError);
  const held = await assertRejects(() => c.servers(), CloudApiError);
  assertEquals([held.code, seen.length], ["RATE_LIMIT_EXCEEDED", 2], "the third call is not sent");
  assert((held.retryAfterSeconds ?? 0) > 0);
});
