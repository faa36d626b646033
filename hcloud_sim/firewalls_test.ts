/**
 * The simulator's Cloud Firewalls against the API's documentation (every response is validated
 * against the OpenAPI spec by the harness): rules and their limits, applying to servers and label
 * selectors with the documented errors, 5 per server, actions, and what gets through.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { allowsInbound } from "./firewall_model.ts";

const WEB = { direction: "in", protocol: "tcp", port: "30000-32767", source_ips: ["203.0.113.0/24"] };

Deno.test("simulator firewalls: rules, applying by server and label selector, limits and errors", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    const a = t.sim.addServer({ name: "a", labels: { role: "node" } });
    const b = t.sim.addServer({ name: "b", labels: { role: "node" } });
    const c = t.sim.addServer({ name: "c" });
    // Before any firewall: everything reaches a server.
    const probe = (id: number, source: string, port: number) =>
      allowsInbound(t.sim.world, id, { protocol: "tcp", source, port });
    assertEquals(probe(a.id, "198.51.100.9", 22), true);

    const created = await t.api("POST", "/firewalls", {
      name: "k8s",
      labels: { cluster: "k" },
      rules: [WEB],
      apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    });
    assertEquals(created.status, 201, JSON.stringify(created.body));
    const fw = created.body.firewall;
    assertEquals(created.body.actions.map((x: { command: string }) => x.command).sort(), [
      "apply_firewall",
      "apply_firewall",
      "set_firewall_rules",
    ]);
    assertEquals(
      fw.applied_to[0].applied_to_resources.map((r: { server: { id: number } }) => r.server.id).sort(),
      [a.id, b.id].sort(),
    );
    const shown = (await t.api("GET", `/servers/${a.id}`)).body.server;
    assertEquals(shown.public_net.firewalls, [{ id: fw.id, status: "applied" }]);
    // Applied: inbound is denied unless a rule allows it; c has no firewall.
    assertEquals(probe(a.id, "203.0.113.7", 30080), true);
    assertEquals(probe(a.id, "198.51.100.9", 30080), false, "source outside the rule");
    assertEquals(probe(a.id, "203.0.113.7", 22), false, "port outside the rule");
    assertEquals(probe(c.id, "198.51.100.9", 22), true);
    // A server labelled later is covered at once (the selector is resolved when used).
    t.sim.control.setLabels("server", c.id, { role: "node" });
    assertEquals(probe(c.id, "198.51.100.9", 22), false);

    // Errors as documented.
    const again = await t.api("POST", `/firewalls/${fw.id}/actions/apply_to_resources`, {
      apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    });
    assertEquals([again.status, again.body.error.code], [422, "firewall_already_applied"]);
    const missing = await t.api("POST", `/firewalls/${fw.id}/actions/apply_to_resources`, {
      apply_to: [{ type: "server", server: { id: 999999 } }],
    });
    assertEquals([missing.status, missing.body.error.code], [404, "firewall_resource_not_found"]);
    const bySelector = await t.api("POST", `/firewalls/${fw.id}/actions/remove_from_resources`, {
      remove_from: [{ type: "server", server: { id: a.id } }],
    });
    assertEquals([bySelector.status, bySelector.body.error.code], [
      422,
      "firewall_managed_by_label_selector",
    ]);
    const inUse = await t.api("DELETE", `/firewalls/${fw.id}`);
    assertEquals([inUse.status, inUse.body.error.code], [422, "resource_in_use"]);

    // set_rules replaces the list: one set_firewall_rules action and one apply per server.
    const set = await t.api("POST", `/firewalls/${fw.id}/actions/set_rules`, {
      rules: [WEB, { direction: "in", protocol: "tcp", port: "22", source_ips: ["0.0.0.0/0", "::/0"] }],
    });
    assertEquals(set.status, 201);
    assertEquals(set.body.actions.length, 1 + 3);
    assertEquals(probe(a.id, "198.51.100.9", 22), true);
    // Limits: 50 entries, 500 effective rules (a rule counts once per CIDR).
    const many = Array.from({ length: 51 }, () => WEB);
    const tooMany = await t.api("POST", `/firewalls/${fw.id}/actions/set_rules`, { rules: many });
    assertEquals([tooMany.status, tooMany.body.error.code], [422, "invalid_input"]);
    const wide = Array.from({ length: 6 }, () => ({
      ...WEB,
      source_ips: Array.from({ length: 100 }, (_, i) => `10.${i}.0.0/16`),
    }));
    const tooWide = await t.api("POST", `/firewalls/${fw.id}/actions/set_rules`, { rules: wide });
    assertEquals(tooWide.status, 422);
    assert(JSON.stringify(tooWide.body).includes("effective rules"));
    const badRule = await t.api("POST", `/firewalls/${fw.id}/actions/set_rules`, {
      rules: [{ direction: "in", protocol: "icmp", port: "80", source_ips: ["0.0.0.0/0"] }],
    });
    assertEquals(badRule.status, 422, "a port on icmp");

    // At most 5 firewalls per server, through selectors too.
    for (let i = 0; i < 4; i++) {
      const more = await t.api("POST", "/firewalls", {
        name: `more-${i}`,
        apply_to: [{ type: "server", server: { id: b.id } }],
      });
      assertEquals(more.status, 201, JSON.stringify(more.body));
    }
    const sixth = await t.api("POST", "/firewalls", {
      name: "sixth",
      apply_to: [{ type: "server", server: { id: b.id } }],
    });
    assertEquals([sixth.status, sixth.body.error.code], [403, "resource_limit_exceeded"]);
    assertEquals((await t.api("GET", "/firewalls?name=sixth")).body.firewalls, [], "nothing is made");

    // Removing the selector frees the servers; then the firewall can go.
    const removed = await t.api("POST", `/firewalls/${fw.id}/actions/remove_from_resources`, {
      remove_from: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    });
    assertEquals(removed.status, 201);
    assertEquals(removed.body.actions.length, 3);
    assertEquals((await t.api("DELETE", `/firewalls/${fw.id}`)).status, 204);
    assertEquals(probe(a.id, "198.51.100.9", 22), true, "no firewall left on a");
  } finally {
    await t.finish();
  }
});
