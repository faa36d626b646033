/**
 * The server cache following the action logs against the simulator: changes recorded as actions
 * are read by ID, changes without one wait for the slow full list or a direct read, and a log that
 * cannot be read falls back to a full list.
 */
import { assert, assertEquals } from "../../../testing/assert.ts";
import { startTestSim } from "../../../testing/sim_harness.ts";
import { ActionWaiter, HcloudClient } from "../../../hcloud_api/mod.ts";
import { hcloudContext, HcloudInstances, ServerCache } from "../mod.ts";
import { DEFAULT_SIM_TOKEN } from "../../../hcloud_sim/simulator.ts";
import { Registry } from "../../../lib/metrics.ts";

Deno.test("server cache (actions): action-logged changes are read by ID; labels wait for the full list; a failing log falls back", async () => {
  const t = await startTestSim();
  try {
    const servers = Array.from({ length: 120 }, (_, i) => t.sim.addServer({ name: `n${i}` }));
    const [a, b, d, e] = servers;
    const metrics = new Registry();
    const cache = new ServerCache(
      new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 }),
      { maxAgeMs: 1, refresh: "actions", fullListPeriodMs: 60_000, metrics },
    );
    const count = (re: RegExp) => t.sim.count(re);
    const refresh = async () => {
      await new Promise((r) => setTimeout(r, 5));
      return await cache.get();
    };
    let snapshot = await cache.get();
    assertEquals(count(/^GET \/servers$/), 3, "the first refresh lists every server (3 pages)");

    // Power, type: recorded as actions; only that server is read.
    await t.api("POST", `/servers/${a.id}/actions/poweroff`);
    await t.api("POST", `/servers/${a.id}/actions/change_type`, { server_type: "cx32", upgrade_disk: false });
    snapshot = await refresh();
    assertEquals([snapshot.byId.get(a.id)?.status, snapshot.byId.get(a.id)?.serverType], ["off", "cx32"]);
    assertEquals(count(/^GET \/servers$/), 3, "no full list");
    assertEquals(
      t.sim.audit.filter((x) => x.method === "GET" && x.path.endsWith(`/servers/${a.id}`)).length,
      1,
    );

    // Deletion, and Primary IPs moving: the old holder and the new one are read.
    await t.api("DELETE", `/servers/${b.id}`);
    const ipv4 = t.sim.world.servers.get(a.id)!.public_net.ipv4!;
    assertEquals((await t.api("POST", `/primary_ips/${ipv4.id}/actions/unassign`)).status, 201);
    snapshot = await refresh();
    assertEquals(snapshot.byId.has(b.id), false, "a deleted server leaves the snapshot");
    assertEquals(snapshot.byId.get(a.id)?.ipv4, undefined);
    assertEquals(snapshot.byIp.has(ipv4.ip!), false);
    assertEquals(
      (await t.api("POST", `/primary_ips/${ipv4.id}/actions/assign`, {
        assignee_id: a.id,
        assignee_type: "server",
      })).status,
      201,
    );
    snapshot = await refresh();
    assertEquals(snapshot.byIp.get(ipv4.ip!)?.map((s) => s.id), [a.id]);
    assertEquals(count(/^GET \/servers$/), 3, "still no full list");

    // No action for labels or a shutdown from inside: the snapshot keeps the old state ...
    await t.api("PUT", `/servers/${d.id}`, { labels: { team: "x" } });
    t.sim.control.setPower(e.id, false);
    snapshot = await refresh();
    assertEquals(snapshot.byId.get(d.id)?.labels, {});
    assertEquals(snapshot.byId.get(e.id)?.status, "running");
    // ... a direct read sees the shutdown, and a demanded full list the labels.
    assertEquals((await cache.server(e.id))?.status, "off");
    snapshot = await cache.get({ full: true });
    assertEquals(snapshot.byId.get(d.id)?.labels, { team: "x" });
    assertEquals(count(/^GET \/servers$/), 6);

    // The log fails: that refresh lists everything instead, and says so in a metric.
    t.sim.control.setFaults({
      rules: [{ match: "^GET /servers/actions", status: 503, code: "unavailable" }],
    });
    await refresh();
    assertEquals(count(/^GET \/servers$/), 9);
    assertEquals(
      metrics.counter("hcloud_server_cache_action_log_fallbacks_total", "").get({ reason: "error" }),
      1,
    );
    t.sim.control.setFaults({ rules: [] });
    await refresh();
    assertEquals(count(/^GET \/servers$/), 12, "the log is back: one full list takes new cursors");
    const before = t.sim.audit.length;
    await refresh();
    const calls = t.sim.audit.slice(before).map((x) => x.route);
    assert(calls.length === 2 && calls.every((r) => r.endsWith("/actions")), calls.join(", "));
  } finally {
    await t.finish();
  }
});

Deno.test("server cache (actions): the slow full list runs at its period; small projects and mode list just list", async () => {
  const t = await startTestSim();
  try {
    for (let i = 0; i < 160; i++) t.sim.addServer({ name: `n${i}` });
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 });
    const lists = () => t.sim.count(/^GET \/servers$/);
    const logs = () => t.sim.count(/\/actions$/);
    const tick = () => new Promise((r) => setTimeout(r, 5));
    const cache = new ServerCache(client, { maxAgeMs: 1, refresh: "actions", fullListPeriodMs: 200 });
    await cache.get();
    await tick();
    await cache.get();
    assertEquals(lists(), 4, "one full list (4 pages), then the logs");
    await new Promise((r) => setTimeout(r, 210));
    await cache.get();
    assertEquals(lists(), 8, "the period is over: a full list again");

    const listing = new ServerCache(client, { maxAgeMs: 1, refresh: "list" });
    const logsBefore = logs();
    await listing.get();
    await tick();
    await listing.get();
    assertEquals([lists(), logs()], [16, logsBefore], "mode list: two full lists, no log read");

    // Two pages or fewer cost no more than the two logs: such a project is simply listed.
    for (let i = 0; i < 70; i++) t.sim.control.deleteServerWithoutAction([...t.sim.world.servers.keys()][0]);
    const small = new ServerCache(client, { maxAgeMs: 1, refresh: "actions" });
    await small.get();
    const before = [lists(), logs()];
    await tick();
    await small.get();
    assertEquals([lists() - before[0], logs() - before[1]], [2, 0], "a full list, no log read");
  } finally {
    await t.finish();
  }
});

Deno.test("instances (actions): a server missing from a fresh but outdated list is read again before a Node goes", async () => {
  const t = await startTestSim();
  try {
    const server = t.sim.addServer({ name: "kept" });
    const others = Array.from({ length: 3 }, (_, i) => t.sim.addServer({ name: `o${i}` }));
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 });
    const cache = new ServerCache(client, {
      maxAgeMs: 60_000,
      refresh: "actions",
      fullListPeriodMs: 3_600_000,
    });
    const context = hcloudContext({ client, cache, actions: new ActionWaiter(client) });
    const instances = new HcloudInstances(context, { addressFamily: "ipv4", zoneLabelEnabled: true });
    // The cloud looks empty for a moment (an API incident) and a full list is taken then.
    const restore = t.sim.control.vanishAllServers();
    assertEquals((await cache.get({ full: true })).all.length, 0);
    restore();
    // The list is still fresh, but it is not what deletes a Node: the server is read now.
    const node = { metadata: { name: "kept" }, spec: { providerID: `hcloud://${server.id}` } };
    assertEquals(await instances.instanceExists(node), true);
    // A server really gone is still reported gone.
    t.sim.control.deleteServer(others[0].id);
    const gone = { metadata: { name: "o0" }, spec: { providerID: `hcloud://${others[0].id}` } };
    assertEquals(await instances.instanceExists(gone), false);
  } finally {
    await t.finish();
  }
});

Deno.test("server cache (actions): the shortest full-list period costs one full list per refresh, as the list design does, and no more", async () => {
  const t = await startTestSim();
  try {
    for (let i = 0; i < 120; i++) t.sim.addServer({ name: `n${i}` });
    const cache = new ServerCache(
      new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 }),
      { maxAgeMs: 1, refresh: "actions", fullListPeriodMs: 1 },
    );
    const lists = () => t.sim.count(/^GET \/servers$/) / 3; // 3 pages a list
    for (let refresh = 1; refresh <= 4; refresh++) {
      await new Promise((r) => setTimeout(r, 5));
      await cache.get();
      // Lookups between refreshes read nothing more.
      for (let i = 0; i < 20; i++) await cache.get({ maxAgeMs: 60_000 });
      assertEquals(lists(), refresh, `refresh ${refresh}: one full list each`);
    }
  } finally {
    await t.finish();
  }
});

Deno.test("server cache (actions): a firewall's rule change reads no server and is told to listeners; lost news is told as a gap", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    Array.from({ length: 120 }, (_, i) => t.sim.addServer({ name: `n${i}`, labels: { role: "node" } }));
    const fw = (await t.api("POST", "/firewalls", {
      name: "nodes",
      apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    })).body.firewall;
    const cache = new ServerCache(
      new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 }),
      { maxAgeMs: 1, refresh: "actions", fullListPeriodMs: 3_600_000 },
    );
    const told: string[] = [];
    cache.onLogged((news) =>
      told.push("gap" in news ? "gap" : news.resources.map((r) => `${r.type} ${r.id}`).join(","))
    );
    const refresh = async () => {
      await new Promise((r) => setTimeout(r, 5));
      return await cache.get();
    };
    await cache.get();
    await refresh();
    assertEquals(told.length, 0, "nothing new in the logs");

    // A rule change in the console: 120 apply_firewall actions, one per server, and no server read.
    await t.api("POST", `/firewalls/${fw.id}/actions/set_rules`, {
      rules: [{ direction: "in", protocol: "tcp", port: "22", source_ips: ["0.0.0.0/0"] }],
    });
    const before = t.sim.audit.length;
    await refresh();
    const calls = t.sim.audit.slice(before).map((x) => x.route);
    assert(calls.every((r) => r.endsWith("/actions")), calls.join(", "));
    assertEquals(told.length, 1);
    assertEquals(new Set(told[0].split(",")), new Set([`firewall ${fw.id}`]));

    // A full list demanded while the logs fail: the news since the old cursors is lost, and said so.
    t.sim.control.setFaults({
      rules: [{ match: "^GET /servers/actions", status: 503, code: "unavailable" }],
    });
    await cache.get({ full: true });
    assertEquals(told.at(-1), "gap");
  } finally {
    await t.finish();
  }
});

Deno.test("server cache (actions): lookups within the max age of the last full list read no server, logs followed since or not", async () => {
  const t = await startTestSim();
  try {
    const servers = Array.from({ length: 160 }, (_, i) => t.sim.addServer({ name: `n${i}` }));
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 });
    // A max age the first part stays well within even on a loaded machine (it makes three requests).
    const cache = new ServerCache(client, {
      maxAgeMs: 1500,
      refresh: "actions",
      fullListPeriodMs: 3_600_000,
    });
    const reads = () => t.sim.count(/^GET \/servers\/\{id\}$/);
    await cache.get();
    // A Node newer than the snapshot demands a refresh: the logs are followed (one server is named).
    await t.api("POST", `/servers/${servers[0].id}/actions/poweroff`);
    const followed = await cache.get({ notBefore: Date.now() });
    assertEquals(followed.full, false, "an incremental refresh");
    const readsAfterRefresh = reads();
    // Four lookups (fewer than a list's pages, so each would be a read of its own) answer from it.
    for (const s of servers.slice(0, 4)) assertEquals((await cache.server(s.id))?.id, s.id);
    assertEquals((await cache.server(servers[0].id))?.status, "off");
    assertEquals(reads(), readsAfterRefresh, "no server read while the full list is fresh");
    // Once the full list is older than the max age, a change no action records is read directly.
    t.sim.control.setPower(servers[1].id, false);
    await new Promise((r) => setTimeout(r, 1550));
    assertEquals((await cache.server(servers[1].id))?.status, "off");
    assertEquals(reads(), readsAfterRefresh + 1);
  } finally {
    await t.finish();
  }
});

Deno.test("server cache (actions): lookups while a full list is read wait for it instead of reading each server", async () => {
  const t = await startTestSim();
  try {
    const servers = Array.from({ length: 160 }, (_, i) => t.sim.addServer({ name: `n${i}` }));
    const gone = servers.pop()!;
    t.sim.control.deleteServerWithoutAction(gone.id);
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 });
    const cache = new ServerCache(client, { maxAgeMs: 60_000, refresh: "actions" });
    t.sim.control.setFaults({ latencyMs: 100 }); // a list of 4 pages takes a few hundred ms
    const list = cache.get();
    await new Promise((r) => setTimeout(r, 20));
    const asked = Date.now();
    const answers = await Promise.all([...servers.slice(0, 3), gone].map((s) => cache.serverRead(s.id)));
    await list;
    assertEquals(t.sim.count(/^GET \/servers\/\{id\}$/), 0, "no server read on its own");
    assertEquals(answers.map((a) => a.info?.id), [servers[0].id, servers[1].id, servers[2].id, undefined]);
    // The answer is as old as the list: a server missing from it is confirmed before a Node goes.
    assert(answers.every((a) => a.at < asked), "answered with the list's time");
  } finally {
    await t.finish();
  }
});
