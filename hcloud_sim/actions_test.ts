/**
 * The simulator's action logs and Primary IPs, as a CCM following the logs reads them. Every
 * response is validated against the OpenAPI spec.
 */
import { assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";

Deno.test("simulator: server changes are recorded with the API's action commands, listed newest first", async () => {
  const t = await startTestSim();
  try {
    const s = t.sim.addServer({ name: "a" });
    assertEquals(
      (await t.api("POST", `/servers/${s.id}/actions/poweroff`)).body.action.command,
      "stop_server",
    );
    assertEquals(
      (await t.api("POST", `/servers/${s.id}/actions/poweron`)).body.action.command,
      "start_server",
    );
    const running = await t.api("POST", `/servers/${s.id}/actions/change_type`, {
      server_type: 100,
      upgrade_disk: false,
    });
    assertEquals([running.status, running.body.error.code], [422, "server_not_stopped"]);
    await t.api("POST", `/servers/${s.id}/actions/shutdown`);
    const typed = await t.api("POST", `/servers/${s.id}/actions/change_type`, {
      server_type: "cx32",
      upgrade_disk: true,
    });
    assertEquals(typed.body.action.command, "change_server_type");
    const bad = await t.api("POST", `/servers/${s.id}/actions/change_type`, { server_type: true });
    assertEquals([bad.status, bad.body.error.code], [422, "invalid_input"]);

    const desc = await t.api("GET", "/servers/actions?sort=id:desc&per_page=2");
    assertEquals(desc.body.actions.map((a: { command: string }) => a.command), [
      "change_server_type",
      "shutdown_server",
    ]);
    assertEquals(desc.body.meta.pagination.next_page, 2);
    const ok = await t.api("GET", "/servers/actions?status=success&sort=id");
    assertEquals(ok.body.actions[0].command, "stop_server");
    assertEquals((await t.api("GET", "/servers/actions?status=done")).status, 422);

    await t.api("DELETE", `/servers/${s.id}`);
    const last = await t.api("GET", "/servers/actions?sort=id:desc&per_page=1");
    assertEquals(last.body.actions[0].command, "delete_server");
    assertEquals(last.body.actions[0].resources, [{ id: s.id, type: "server" }]);
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: Primary IPs are the servers' public addresses; assign and unassign need the server off", async () => {
  const t = await startTestSim();
  try {
    const s = t.sim.addServer({ name: "a" });
    const ipv4 = s.public_net.ipv4!;
    const got = await t.api("GET", `/primary_ips/${ipv4.id}`);
    assertEquals([got.body.primary_ip.ip, got.body.primary_ip.assignee_id, got.body.primary_ip.auto_delete], [
      ipv4.ip,
      s.id,
      true,
    ]);
    assertEquals((await t.api("GET", `/primary_ips?ip=${ipv4.ip}`)).body.primary_ips.length, 1);
    const running = await t.api("POST", `/primary_ips/${ipv4.id}/actions/unassign`);
    assertEquals([running.status, running.body.error.code], [422, "server_not_stopped"]);
    await t.api("POST", `/servers/${s.id}/actions/poweroff`);
    const un = await t.api("POST", `/primary_ips/${ipv4.id}/actions/unassign`);
    assertEquals([un.status, un.body.action.command, un.body.action.resources], [201, "unassign_primary_ip", [
      {
        id: ipv4.id,
        type: "primary_ip",
      },
    ]]);
    assertEquals((await t.api("GET", `/servers/${s.id}`)).body.server.public_net.ipv4, null);

    const created = await t.api("POST", "/primary_ips", {
      name: "spare",
      type: "ipv4",
      assignee_type: "server",
      location: "fsn1",
    });
    assertEquals([created.status, created.body.primary_ip.assignee_id, created.body.action.command], [
      201,
      null,
      "create_primary_ip",
    ]);
    const assigned = await t.api("POST", `/primary_ips/${created.body.primary_ip.id}/actions/assign`, {
      assignee_id: s.id,
      assignee_type: "server",
    });
    assertEquals(assigned.body.action.command, "assign_primary_ip");
    assertEquals(
      (await t.api("GET", `/servers/${s.id}`)).body.server.public_net.ipv4.ip,
      created.body.primary_ip.ip,
    );
    const twice = await t.api("POST", `/primary_ips/${ipv4.id}/actions/assign`, {
      assignee_id: s.id,
      assignee_type: "server",
    });
    assertEquals([twice.status, twice.body.error.code], [422, "server_has_ipv4"]);
    const log = await t.api("GET", "/primary_ips/actions?sort=id:desc");
    assertEquals(log.body.actions.map((a: { command: string }) => a.command), [
      "assign_primary_ip",
      "create_primary_ip",
      "unassign_primary_ip",
    ]);

    const bad = await t.api("POST", "/primary_ips", { name: "x", type: "ipv5", assignee_type: "server" });
    assertEquals([
      bad.status,
      bad.body.error.code,
      bad.body.error.details.fields.map((f: { name: string }) => f.name).sort(),
    ], [
      422,
      "invalid_input",
      [
        "location",
        "type",
      ],
    ]);
    assertEquals(
      (await t.api("GET", "/primary_ips")).body.primary_ips.length,
      3,
      "nothing created by bad input",
    );

    // Deleting the server deletes its auto-delete Primary IPs and unassigns the others.
    await t.api("DELETE", `/servers/${s.id}`);
    assertEquals((await t.api("GET", `/primary_ips/${s.public_net.ipv6!.id}`)).status, 404);
    assertEquals(
      (await t.api("GET", `/primary_ips/${created.body.primary_ip.id}`)).body.primary_ip.assignee_id,
      null,
    );
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: endpoints it does not simulate answer 404 not_found, as an unknown route does", async () => {
  const t = await startTestSim();
  try {
    const s = t.sim.addServer({ name: "a" });
    for (
      const [method, path] of [["POST", `/servers/${s.id}/actions/rebuild`], ["GET", "/isos"], [
        "GET",
        "/zones",
      ]]
    ) {
      const res = await t.api(method, path);
      assertEquals([res.status, res.body.error.code], [404, "not_found"], `${method} ${path}`);
    }
    const wrongMethod = await t.api("PATCH", `/servers/${s.id}`);
    assertEquals(wrongMethod.status, 405);
  } finally {
    await t.finish();
  }
});
