import { assertEquals, assertThrows } from "../testing/assert.ts";
import { Simulator } from "./simulator.ts";

Deno.test("sim control: a console deletion leaves an action; a vanished server leaves none and comes back", () => {
  const sim = new Simulator({ quiet: true });
  const a = sim.addServer({ name: "a" });
  const b = sim.addServer({ name: "b" });
  sim.control.deleteServer(a.id);
  assertEquals(sim.world.servers.has(a.id), false);
  assertEquals(sim.world.actionsOf("server", a.id).map((x) => x.command), ["delete_server"]);

  const gone = sim.control.vanishServer(b.id);
  assertEquals(sim.world.servers.has(b.id), false);
  assertEquals(sim.world.actionsOf("server", b.id), []);
  sim.control.restoreServer(gone);
  assertEquals(sim.world.servers.get(b.id)?.name, "b");

  const restore = sim.control.vanishAllServers();
  assertEquals(sim.world.servers.size, 0);
  restore();
  assertEquals([...sim.world.servers.keys()], [b.id]);
  assertThrows(() => sim.control.deleteServer(a.id), Error);
});

Deno.test("sim control: faults change only the knobs named; clearFaults resets them all", () => {
  const sim = new Simulator({ quiet: true, latencyMs: 5 });
  sim.control.setFaults({ rateLimitBurst: 2 });
  assertEquals([sim.faults.latencyMs, sim.faults.rateLimitBurst], [5, 2]);
  sim.control.setFaults({ rules: [{ match: ".", status: 503, code: "unavailable" }] });
  assertEquals([sim.faults.rateLimitBurst, sim.faults.rules.length], [2, 1]);
  sim.control.clearFaults();
  assertEquals([sim.faults.latencyMs, sim.faults.rateLimitBurst, sim.faults.rules.length], [0, 0, 0]);
});

Deno.test("sim control: renames and label edits record no action", () => {
  const sim = new Simulator({ quiet: true });
  const s = sim.addServer({ name: "a", labels: { x: "1" } });
  sim.control.renameServer(s.id, "b");
  sim.control.setLabels("server", s.id, { y: "2" });
  assertEquals([s.name, s.labels], ["b", { y: "2" }]);
  assertEquals(sim.world.actionsOf("server", s.id), []);
});

Deno.test("sim control over HTTP: PUT /_sim/faults sets every knob, and what it leaves out is off", async () => {
  const sim = new Simulator({ quiet: true, latencyMs: 5 }).start();
  const put = (body: unknown) =>
    sim.handle(new Request("http://sim/_sim/faults", { method: "PUT", body: JSON.stringify(body) }));
  await (await put({ rateLimitBurst: 1, fail_next_actions: 2, action_duration_ms: 7 })).body?.cancel();
  assertEquals([sim.faults.latencyMs, sim.faults.rateLimitBurst], [0, 1]);
  assertEquals([sim.world.actionFailure.next, sim.world.actionDurationMs], [2, 7]);
  const limited = await sim.handle(
    new Request("http://sim/v1/servers", { headers: { authorization: "Bearer " + [...sim.tokens][0] } }),
  );
  assertEquals(limited.status, 429);
  await limited.body?.cancel();
  await sim.stop();
});
