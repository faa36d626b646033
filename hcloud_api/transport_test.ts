import { assertEquals, assertRejects } from "../testing/assert.ts";
import { createTransport } from "./transport.ts";
import { CloudApiError } from "./errors.ts";
import { withSignal } from "../lib/cancellation.ts";
import { withPriority } from "../lib/priority.ts";

const answering = (body: string) =>
  createTransport({
    token: "t",
    fetch: () => Promise.resolve(new Response(body, { headers: { "content-type": "application/json" } })),
  });

Deno.test("hcloud transport: a number beyond 2^53 in an answer fails the call instead of naming another object", async () => {
  const send = (body: string) => answering(body).send(new Request("http://127.0.0.1:1/v1/servers"));
  const ok = await send('{"servers":[{"id":9007199254740991,"name":"12345678901234567890"}]}');
  assertEquals((await ok.json()).servers[0].id, 9007199254740991);
  const err = await assertRejects(() => send('{"server":{"id": 9007199254740993 }}'), CloudApiError);
  assertEquals(err.code, "unsafe_number");
  await assertRejects(() => send('{"network":{"servers":[1,18446744073709551615]}}'), CloudApiError);
  // A 204 (a DELETE) passes untouched.
  const none = createTransport({
    token: "t",
    fetch: () =>
      Promise.resolve(new Response(null, { status: 204, headers: { "content-type": "application/json" } })),
  });
  assertEquals((await none.send(new Request("http://127.0.0.1:1/v1/x", { method: "DELETE" }))).status, 204);
});

Deno.test("hcloud transport: once leadership ends, no write is sent and budget waits end; reads still go", async () => {
  const sent: string[] = [];
  const leading = new AbortController();
  const transport = createTransport({
    token: "t",
    fence: () => leading.signal,
    fetch: (r) => {
      sent.push(r.method);
      // An almost empty budget: the next request would wait minutes for it.
      return Promise.resolve(
        new Response("{}", {
          headers: {
            "content-type": "application/json",
            "ratelimit-limit": "3600",
            "ratelimit-remaining": "0",
          },
        }),
      );
    },
  });
  await transport.send(new Request("http://127.0.0.1:1/v1/servers", { method: "POST", body: "{}" }));
  // This one waits for budget, until leadership ends: then it is refused, never sent.
  const waiting = transport.send(
    new Request("http://127.0.0.1:1/v1/servers", { method: "POST", body: "{}" }),
  );
  setTimeout(() => leading.abort(), 50);
  const started = Date.now();
  await assertRejects(() => waiting, Error);
  assertEquals(Date.now() - started < 5_000, true, "the wait ended with leadership");
  const err = await assertRejects(
    () => transport.send(new Request("http://127.0.0.1:1/v1/load_balancers/1", { method: "DELETE" })),
    CloudApiError,
  );
  assertEquals([err.code, sent], ["fenced", ["POST"]]);
});

Deno.test("hcloud transport: the current work's signal ends a request under way and starts none after it", async () => {
  const sent: string[] = [];
  const transport = createTransport({
    token: "t",
    // Answers only when the request is aborted (a slow API).
    fetch: (r) => {
      sent.push(r.method);
      return new Promise((_resolve, reject) =>
        r.signal.addEventListener("abort", () => reject(r.signal.reason))
      );
    },
  });
  const work = new AbortController();
  const underWay = withSignal(
    work.signal,
    () => transport.send(new Request("http://127.0.0.1:1/v1/servers", { method: "GET" })),
  );
  setTimeout(() => work.abort(new Error("lease lost")), 20);
  const err = await assertRejects(() => underWay, Error);
  assertEquals(err.message, "lease lost");
  const late = await assertRejects(
    () =>
      withSignal(
        work.signal,
        () => transport.send(new Request("http://127.0.0.1:1/v1/servers", { method: "POST", body: "{}" })),
      ),
    Error,
  );
  assertEquals(late.message, "lease lost");
  assertEquals(sent, ["GET"], "nothing is sent once the work is cancelled");
});

Deno.test("hcloud transport: an HTTP client error that quotes a header never reaches the caller with it", async () => {
  const token = "s".repeat(40);
  const t = createTransport({
    token: `${token}\n# a comment line`,
    fetch: (req) => {
      // What Deno's fetch says of a header value with a line break.
      throw new TypeError(`Invalid header value: "${req.headers.get("authorization")}"`);
    },
    maxRetries: 0,
  });
  const err = await assertRejects(() => t.send(new Request("http://127.0.0.1:1/v1/servers")), TypeError);
  assertEquals(err.message.includes(token), false, err.message);
  assertEquals(err.message, "the HTTP client refused a request header (its value is withheld)");
});

Deno.test("hcloud transport: with a fifth of the budget left, Service syncs wait while repairs and routes go (probe N14)", async () => {
  const sent: string[] = [];
  const transport = createTransport({
    token: "t",
    fetch: (r) => {
      sent.push(new URL(r.url).pathname);
      return Promise.resolve(
        new Response("{}", {
          headers: {
            "content-type": "application/json",
            "ratelimit-limit": "3600",
            "ratelimit-remaining": "720",
          },
        }),
      );
    },
  });
  const get = (path: string) => transport.send(new Request(`http://127.0.0.1:1/v1/${path}`));
  await get("first"); // learns the bucket: 720 of 3600 left
  const tenant = new AbortController();
  const held = withSignal(tenant.signal, () => withPriority("service", () => get("load_balancers")));
  await withPriority("loadbalancer", () => get("targets"));
  await withPriority("route", () => get("routes"));
  await withPriority("refresh", () => get("servers"));
  tenant.abort();
  await assertRejects(() => held, Error);
  assertEquals(sent, ["/v1/first", "/v1/targets", "/v1/routes", "/v1/servers"]);
});
