/**
 * Following the action logs on their own (the cache's use of them is in cache_test.ts): the news
 * since a list's old cursors, and the point where reading each named server would cost as much as
 * listing them all.
 */
import { assert, assertEquals } from "../../../testing/assert.ts";
import { startTestSim } from "../../../testing/sim_harness.ts";
import { HcloudClient, toServerInfo } from "../../../hcloud_api/mod.ts";
import { DEFAULT_SIM_TOKEN } from "../../../hcloud_sim/simulator.ts";
import { cursorsBeforeList, followLogs } from "./log_follower.ts";
import { buildSnapshot } from "./snapshot.ts";

Deno.test("log follower: news since old cursors; more changed servers than list pages are left to a list", async () => {
  const t = await startTestSim();
  try {
    const servers = Array.from({ length: 120 }, (_, i) => t.sim.addServer({ name: `n${i}` }));
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10 });
    const base = buildSnapshot(servers.map((s) => toServerInfo(s)), Date.now(), true);
    const first = await cursorsBeforeList(client, undefined);
    assertEquals(first.news, undefined, "no old cursors: nothing to tell");

    await t.api("POST", `/servers/${servers[0].id}/actions/poweroff`);
    const again = await cursorsBeforeList(client, first.cursors);
    assertEquals(again.news, { resources: [{ id: servers[0].id, type: "server" }] });

    const reads: number[] = [];
    const read = (id: number) => {
      reads.push(id);
      return Promise.resolve(base.byId.get(id));
    };
    const one = await followLogs(client, base, first.cursors, read);
    assertEquals([...one.changes!.changed.keys()], [servers[0].id], "the one named server is read");
    assert(one.changes!.cursors.servers > first.cursors.servers, "the cursor moves past the action");

    // Three servers changed in a project of three list pages: listing is as cheap, nothing is read.
    for (const s of servers.slice(1, 4)) await t.api("POST", `/servers/${s.id}/actions/poweroff`);
    reads.length = 0;
    const many = await followLogs(client, base, one.changes!.cursors, read);
    assertEquals(many.changes, undefined);
    assertEquals(reads, []);
    assertEquals(
      (many.news as { resources: { id: number }[] }).resources.map((r) => r.id).sort(),
      servers.slice(1, 4).map((s) => s.id).sort(),
      "what the logs named is still told",
    );
  } finally {
    await t.finish();
  }
});
