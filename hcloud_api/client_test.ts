import { assertEquals, assertMatch, assertRejects } from "../testing/assert.ts";
import { HcloudClient, MAX_PAGES, PARALLEL_PAGES } from "./client.ts";
import { CloudApiError } from "./errors.ts";
import { MAX_RESPONSE_BYTES } from "./bounded_answer.ts";

/** A client whose every list page is answered by `page(n)`; counts the requests. */
function pagedClient(page: (n: number) => { items: number[]; next: number | null; last?: number | null }) {
  let requests = 0;
  const client = new HcloudClient({
    endpoint: "http://127.0.0.1:1/v1",
    token: "t",
    maxRetries: 0,
    fetch: (req) => {
      requests++;
      const n = Number(new URL(req.url).searchParams.get("page"));
      const { items, next, last } = page(n);
      const body = {
        servers: items.map((id) => ({ id })),
        meta: { pagination: { page: n, next_page: next, last_page: last ?? null } },
      };
      return Promise.resolve(Response.json(body));
    },
  });
  const list = () =>
    client.listAll<{ id: number }, number>(
      "list servers",
      "servers",
      (page) => client.api.GET("/servers", { params: { query: { page, per_page: 1 } } }),
      (s) => s.id,
    );
  return { list, requests: () => requests };
}

Deno.test("hcloud client: a list must advance and end (probe N10)", async () => {
  const honest = pagedClient((n) => ({ items: [n], next: n < 3 ? n + 1 : null, last: 3 }));
  assertEquals(await honest.list(), [1, 2, 3]);

  const endless = pagedClient((n) => ({ items: [n], next: n + 1 }));
  const err = await assertRejects(endless.list, CloudApiError);
  assertMatch(err.message, new RegExp(`more pages than the ${MAX_PAGES}`));
  assertEquals(endless.requests(), MAX_PAGES);

  const beyondAnnounced = pagedClient((n) => ({ items: [n], next: n + 1, last: 5 }));
  assertMatch(
    (await assertRejects(beyondAnnounced.list, CloudApiError)).message,
    /more pages than announced/,
  );
  assertEquals(beyondAnnounced.requests(), 5);

  const stuck = pagedClient(() => ({ items: [1], next: 1 }));
  assertMatch(
    (await assertRejects(stuck.list, CloudApiError)).message,
    /page 1 names page 1 as the next one/,
  );
  assertEquals(stuck.requests(), 1);
});

Deno.test("hcloud client: pages after the first are read a few at a time, their items kept in order", async () => {
  let inFlight = 0;
  let most = 0;
  let end = 12;
  const asked: number[] = [];
  const client = new HcloudClient({
    endpoint: "http://127.0.0.1:1/v1",
    token: "t",
    maxRetries: 0,
    fetch: async (req) => {
      const n = Number(new URL(req.url).searchParams.get("page"));
      asked.push(n);
      most = Math.max(most, ++inFlight);
      // Later pages answer sooner: the order of the answers is not the order of the list.
      await new Promise((r) => setTimeout(r, (13 - n) * 3));
      inFlight--;
      // A list that shrank while read: page `end` is its last now, the pages after it fail.
      if (n > end) {
        return Response.json({ error: { code: "server_error", message: "gone" } }, { status: 500 });
      }
      return Response.json({
        servers: [{ id: n * 10 }, { id: n * 10 + 1 }],
        meta: { pagination: { page: n, next_page: n < end ? n + 1 : null, last_page: 12 } },
      });
    },
  });
  const list = () =>
    client.listAll<{ id: number }, number>(
      "list servers",
      "servers",
      (page) => client.api.GET("/servers", { params: { query: { page, per_page: 2 } } }),
      (s) => s.id,
    );
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => [(i + 1) * 10, (i + 1) * 10 + 1]).flat();
  assertEquals(await list(), upTo(12));
  assertEquals(
    asked.toSorted((a, b) => a - b),
    Array.from({ length: 12 }, (_, i) => i + 1),
    "each page once",
  );
  assertEquals(most, PARALLEL_PAGES, "never more pages at once than that");
  end = 5;
  asked.length = 0;
  assertEquals(await list(), upTo(5), "the list ends where a page says so; pages read ahead are dropped");
  assertEquals(Math.max(...asked), 5 + PARALLEL_PAGES - 1, "read ahead no further than the window");
});

Deno.test("hcloud client: an answer larger than the bound is refused before it is held (probe N10)", async () => {
  const huge = (declare: boolean) =>
    new HcloudClient({
      endpoint: "http://127.0.0.1:1/v1",
      token: "t",
      maxRetries: 0,
      fetch: () => {
        const chunk = new TextEncoder().encode(" ".repeat(1024 * 1024));
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(c) {
            if (sent++ > MAX_RESPONSE_BYTES / chunk.byteLength + 1) c.close();
            else c.enqueue(chunk);
          },
        });
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (declare) headers["content-length"] = String(MAX_RESPONSE_BYTES + 10);
        return Promise.resolve(new Response(body, { headers }));
      },
    });
  for (const declare of [true, false]) {
    const client = huge(declare);
    const err = await assertRejects(
      () => client.call("list servers", client.api.GET("/servers", {})),
      CloudApiError,
    );
    assertEquals(err.code, "response_too_large");
  }
});

Deno.test("hcloud client: a streamed list reads a page larger than the whole-answer bound, item by item, numbers checked", async () => {
  const item = (id: number | string) => `{"id":${id},"filler":"${"x".repeat(1024 * 1024 - 40)}"}`;
  const page = (ids: (number | string)[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        const enc = new TextEncoder();
        c.enqueue(enc.encode('{"meta":{"pagination":{"next_page":null}},"load_balancers":['));
        ids.forEach((id, i) => c.enqueue(enc.encode((i ? "," : "") + item(id))));
        c.enqueue(enc.encode("]}"));
        c.close();
      },
    });
  let ids: (number | string)[] = [];
  const client = new HcloudClient({
    endpoint: "http://127.0.0.1:1/v1",
    token: "t",
    maxRetries: 0,
    fetch: () =>
      Promise.resolve(new Response(page(ids), { headers: { "content-type": "application/json" } })),
  });
  const streamed = () =>
    client.listAllStreamed<{ id: number }, number>(
      "list load balancers",
      "load_balancers",
      (p, s) => client.api.GET("/load_balancers", { params: { query: { page: p } }, ...s }),
      (lb) => lb.id,
    );
  // 40 items of 1 MB: past the 4 MB a whole answer may have, read one at a time.
  ids = Array.from({ length: 40 }, (_, i) => i + 1);
  assertEquals(await streamed(), ids);
  const whole = await assertRejects(
    () =>
      client.listAll(
        "list load balancers",
        "load_balancers",
        (p) => client.api.GET("/load_balancers", { params: { query: { page: p } } }),
      ),
    CloudApiError,
  );
  assertEquals(whole.code, "response_too_large", "the same page read whole is refused");
  // An ID beyond 2^53 in one item: the list fails, as a whole answer would.
  ids = [1, "9007199254740993"];
  assertEquals((await assertRejects(streamed, CloudApiError)).code, "unsafe_number");
  // Not JSON: a bad answer.
  ids = ["nope"];
  assertEquals((await assertRejects(streamed, CloudApiError)).code, "invalid_response");
});

Deno.test("hcloud client: the transport's own headers (endpoint, streamed) are never sent to the API", async () => {
  const sent: string[][] = [];
  const client = new HcloudClient({
    endpoint: "http://127.0.0.1:1/v1",
    token: "t",
    maxRetries: 0,
    fetch: (req) => {
      sent.push([...req.headers.keys()]);
      return Promise.resolve(Response.json({ load_balancers: [], meta: {} }));
    },
  });
  await client.listAllStreamed(
    "list load balancers",
    "load_balancers",
    (p, s) => client.api.GET("/load_balancers", { params: { query: { page: p } }, ...s }),
  );
  await client.call("list load balancers", client.api.GET("/load_balancers", {}));
  assertEquals(sent.length, 2);
  for (const names of sent) {
    assertEquals(names.filter((n) => n.startsWith("x-deno-ccm")), [], names.join(", "));
    assertEquals(names.includes("authorization"), true);
  }
});
