import { assert, assertEquals, assertRejects } from "../../../testing/assert.ts";
import { HcloudClient } from "../../../hcloud_api/mod.ts";
import { ActionLogGapError, newestActionId, readActionLog } from "./action_log.ts";
import { CloudApiError } from "../../../hcloud_api/mod.ts";

/** A client whose transport serves `log` (newest first) in pages of 50, as the API's id:desc sort does. */
function logClient(
  log: { id: number; status: string; server: number; command?: string; firewall?: number }[],
  raw?: unknown,
) {
  const requests: string[] = [];
  const fetch = (input: Request | URL | string) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    requests.push(url.search);
    const perPage = Number(url.searchParams.get("per_page"));
    const page = Number(url.searchParams.get("page") ?? 1);
    const sorted = [...log].sort((a, b) => b.id - a.id);
    const slice = sorted.slice((page - 1) * perPage, page * perPage);
    const body = raw ?? {
      actions: slice.map((a) => ({
        id: a.id,
        command: a.command ?? "attach_to_network",
        status: a.status,
        progress: 100,
        started: "2026-01-01T00:00:00Z",
        finished: null,
        error: null,
        resources: [
          ...(a.firewall ? [{ id: a.firewall, type: "firewall" }] : []),
          { id: a.server, type: "server" },
        ],
      })),
      meta: {
        pagination: { page, per_page: perPage, next_page: page * perPage < log.length ? page + 1 : null },
      },
    };
    return Promise.resolve(Response.json(body));
  };
  return {
    client: new HcloudClient({ endpoint: "http://sim/v1", token: "t", fetch, retryBaseMs: 1 }),
    requests,
  };
}

const actions = (from: number, to: number, status = "success") =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ id: from + i, status, server: 1000 + from + i }));

Deno.test("action log: reads newest first back to the cursor, across pages", async () => {
  const { client, requests } = logClient(actions(1, 130));
  assertEquals(await newestActionId(client, "/servers/actions"), 130);
  const read = await readActionLog(client, "/servers/actions", 60);
  assertEquals(read.cursor, 130);
  assertEquals(read.resources.map((r) => r.id).sort(), actions(61, 130).map((a) => a.server).sort());
  assertEquals(read.requests, 2, "50 per page: 130..81, then 80..31 (stops at 60)");
  assert(requests.every((q) => q.includes("sort=id%3Adesc") || q.includes("sort=id:desc")), requests.join());
  const none = await readActionLog(client, "/servers/actions", 130);
  assertEquals([none.cursor, none.resources.length, none.requests], [130, 0, 1]);
});

Deno.test("action log: a running action holds the cursor so it is read again once finished", async () => {
  const log = [...actions(1, 10), { id: 11, status: "running", server: 7 }, ...actions(12, 14)];
  const { client } = logClient(log);
  const read = await readActionLog(client, "/servers/actions", 5);
  assertEquals(read.cursor, 10);
  assertEquals(read.resources.length, 9);
  // The cursor taken before a full list stops below it too: its change lands after the list.
  assertEquals(await newestActionId(client, "/servers/actions"), 10);
});

Deno.test("action log: a gap, too much news and a wrong shape are errors (the caller lists instead)", async () => {
  const { client } = logClient(actions(100, 120));
  const gap = await assertRejects(() => readActionLog(client, "/servers/actions", 50), ActionLogGapError);
  assertEquals(gap.reason, "gap");
  assertEquals(
    (await readActionLog(client, "/servers/actions", 0)).cursor,
    120,
    "cursor 0: an empty log before",
  );
  const busy = logClient(actions(1, 400)).client;
  const many = await assertRejects(() => readActionLog(busy, "/servers/actions", 10, 4), ActionLogGapError);
  assertEquals(many.reason, "too_many");
  for (
    const raw of [{ actions: "x" }, { actions: [{ id: 1, status: "success" }] }, {
      actions: [{ id: 1, status: "success", resources: [{ id: "1", type: "server" }] }],
    }]
  ) {
    const bad = await assertRejects(
      () => readActionLog(logClient([], raw).client, "/servers/actions", 0),
      CloudApiError,
    );
    assertEquals(bad.code, "invalid_response");
  }
});

Deno.test("action log: a firewall's actions name the firewall, not the servers it applies to", async () => {
  const { client } = logClient([
    ...actions(1, 3),
    { id: 4, status: "success", server: 7, command: "apply_firewall", firewall: 90 },
    { id: 5, status: "success", server: 8, command: "remove_firewall", firewall: 91 },
    { id: 6, status: "success", server: 9, command: "attach_to_network", firewall: 92 },
  ]);
  const read = await readActionLog(client, "/servers/actions", 3);
  assertEquals(
    read.resources.map((r) => `${r.type} ${r.id}`).sort(),
    ["firewall 90", "firewall 91", "firewall 92", "server 9"],
    "servers 7 and 8 only had a firewall applied or removed: nothing to read again",
  );
});
