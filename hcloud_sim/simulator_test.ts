/**
 * Conformance of the Hetzner API simulator: auth, errors, pagination, filters, label selectors,
 * actions and locking, protection, rate limits, networks, load balancers, certificates, faults
 * and the audit log. Every response is validated against the OpenAPI spec.
 */
import { assert, assertEquals, assertMatch } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { applySeed } from "./control.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY } from "../tests/fixtures/example_com.ts";

const NETWORK_SEED = {
  networks: [{
    name: "k8s",
    ip_range: "10.0.0.0/16",
    subnets: [{ ip_range: "10.0.1.0/24", network_zone: "eu-central" }],
  }],
};

Deno.test("simulator: auth, error envelope and rate-limit headers", async () => {
  const t = await startTestSim();
  try {
    const res = await t.api("GET", "/servers", undefined, "wrong");
    assertEquals(res.status, 401);
    assertEquals(res.body, {
      error: { code: "unauthorized", message: "unable to authenticate", details: null },
    });
    const ok = await t.api("GET", "/servers");
    assertEquals(ok.status, 200);
    assertEquals(ok.headers.get("ratelimit-limit"), "3600");
    assert(Number(ok.headers.get("ratelimit-remaining")) < 3600);
    assert(Number(ok.headers.get("ratelimit-reset")) >= Math.floor(Date.now() / 1000));
    assertEquals((await t.api("GET", "/servers/999")).body.error.code, "not_found");
    assertEquals((await t.api("GET", "/nothing")).status, 404);
    const bad = await t.api("POST", "/networks", "{not json");
    assertEquals([bad.status, bad.body.error.code], [400, "json_error"]);
    const invalid = await t.api("POST", "/networks", { name: "n", ip_range: "8.8.8.0/24" });
    assertEquals([invalid.status, invalid.body.error.code], [422, "invalid_input"]);
    assertEquals(invalid.body.error.details.fields[0].name, "ip_range");
    const missing = await t.api("POST", "/load_balancers", {
      load_balancer_type: "lb11",
      location: "fsn1",
      network_zone: "eu-central",
    });
    assertEquals(missing.body.error.details.fields.map((f: { name: string }) => f.name).sort(), [
      "location",
      "name",
      "network_zone",
    ]);
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: rate limit answers 429 when the bucket is empty", async () => {
  const t = await startTestSim({ rateLimit: 3 });
  try {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.api("GET", "/locations")).status);
    assertEquals(statuses, [200, 200, 200, 429, 429]);
    const res = await t.api("GET", "/locations");
    assertEquals(res.body.error.code, "rate_limit_exceeded");
    assertEquals(res.headers.get("ratelimit-remaining"), "0");
    assertEquals(t.sim.rateLimited, 3);
    // Refused requests are audited by route, as answered ones are: `PUT /servers/{id}`, not its number.
    await t.api("PUT", "/servers/31458", { labels: {} });
    await t.api("PUT", "/servers/31459", { labels: {} }, "wrong");
    assertEquals(t.sim.audit.slice(-2).map((e) => [e.route, e.status]), [
      ["PUT /servers/{id}", 429],
      ["PUT /servers/{id}", 401],
    ]);
    // A request still in flight (a benchmark counting at the end of its window) is named by route too.
    t.sim.control.setFaults({ latencyMs: 300 });
    const pending = t.api("GET", "/servers/31460");
    await new Promise((r) => setTimeout(r, 50));
    assertEquals([t.sim.audit.at(-1)?.route, t.sim.audit.at(-1)?.status], ["GET /servers/{id}", 0]);
    await pending;
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: pagination, filters, label selectors and sorting", async () => {
  const t = await startTestSim();
  try {
    for (let i = 0; i < 60; i++) {
      t.sim.addServer({
        name: `s-${String(i).padStart(2, "0")}`,
        labels: { role: i % 3 === 0 ? "cp" : "worker", idx: String(i) },
        ipv4: i !== 5,
        status: i === 7 ? "off" : "running",
      });
    }
    const p1 = await t.api("GET", "/servers");
    assertEquals(p1.body.servers.length, 25);
    assertEquals(p1.body.meta.pagination, {
      page: 1,
      per_page: 25,
      previous_page: null,
      next_page: 2,
      last_page: 3,
      total_entries: 60,
    });
    assertMatch(p1.headers.get("link")!, /page=2&per_page=25>; rel="next"/);
    const p3 = await t.api("GET", "/servers?page=3");
    assertEquals([p3.body.servers.length, p3.body.meta.pagination.next_page], [10, null]);
    assertEquals((await t.api("GET", "/servers?per_page=100")).body.servers.length, 50);
    assertEquals((await t.api("GET", "/servers?page=9")).body.servers.length, 0);
    assertEquals(
      (await t.api("GET", "/servers?name=s-42")).body.servers.map((s: { name: string }) => s.name),
      ["s-42"],
    );
    const count = async (selector: string) =>
      (await t.api("GET", `/servers?per_page=50&label_selector=${encodeURIComponent(selector)}`)).body.meta
        .pagination.total_entries;
    assertEquals(await count("role=cp"), 20);
    assertEquals(await count("role==cp"), 20);
    assertEquals(await count("role!=cp"), 40);
    assertEquals(await count("idx in (1,2,3)"), 3);
    assertEquals(await count("role=cp,idx notin (0,3)"), 18);
    assertEquals(await count("role"), 60);
    assertEquals(await count("!role"), 0);
    const bad = await t.api("GET", "/servers?label_selector=" + encodeURIComponent("a b c"));
    assertEquals(bad.body.error.code, "invalid_input");
    assertEquals(
      (await t.api("GET", "/servers?status=off")).body.servers.map((s: { name: string }) => s.name),
      ["s-07"],
    );
    assertEquals((await t.api("GET", "/servers?sort=name:desc&per_page=1")).body.servers[0].name, "s-59");
    assertEquals((await t.api("GET", "/servers?name=s-05")).body.servers[0].public_net.ipv4, null);
    assertEquals((await t.api("GET", "/servers?sort=bogus")).status, 422);
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: actions run, lock their resource, and are polled in batches", async () => {
  const t = await startTestSim({ actionDurationMs: 300 });
  try {
    const a = t.sim.addServer({ name: "a" });
    const b = t.sim.addServer({ name: "b" });
    const off = await t.api("POST", `/servers/${a.id}/actions/poweroff`);
    assertEquals([off.status, off.body.action.status, off.body.action.command], [
      201,
      "running",
      "stop_server",
    ]);
    assertEquals((await t.api("GET", `/servers/${a.id}`)).body.server.locked, true);
    const again = await t.api("POST", `/servers/${a.id}/actions/poweron`);
    assertEquals([again.status, again.body.error.code], [423, "locked"]);
    const on = await t.api("POST", `/servers/${b.id}/actions/reboot`);
    const both = await t.api("GET", `/actions?id=${off.body.action.id}&id=${on.body.action.id}`);
    assertEquals(both.body.actions.map((x: { status: string }) => x.status), ["running", "running"]);
    await new Promise((r) => setTimeout(r, 350));
    const done = await t.api("GET", `/actions?id=${off.body.action.id}&id=${on.body.action.id}`);
    assertEquals(done.body.actions.map((x: { status: string }) => x.status), ["success", "success"]);
    assertEquals((await t.api("GET", `/servers/${a.id}`)).body.server.status, "off");
    assertEquals((await t.api("GET", `/actions/${on.body.action.id}`)).body.action.progress, 100);
    assertEquals((await t.api("GET", `/servers/${a.id}/actions`)).body.actions.length, 1);
    assertEquals((await t.api("GET", `/servers/${a.id}/actions/${off.body.action.id}`)).status, 200);
    assertEquals((await t.api("GET", `/servers/${b.id}/actions/${off.body.action.id}`)).status, 404);
    assertEquals((await t.api("GET", "/actions")).status, 422);
    t.sim.control.failNextActions(1);
    const failing = await t.api("POST", `/servers/${b.id}/actions/shutdown`);
    await new Promise((r) => setTimeout(r, 350));
    const failed = (await t.api("GET", `/actions/${failing.body.action.id}`)).body.action;
    assertEquals([failed.status, failed.error.code], ["error", "action_failed"]);
    await t.api("POST", `/servers/${b.id}/actions/change_protection`, { delete: true });
    const del = await t.api("DELETE", `/servers/${b.id}`);
    assertEquals([del.status, del.body.error.code], [423, "protected"]);
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: networks validate subnets, routes and gateways; a busy network answers conflict", async () => {
  const t = await startTestSim({ actionDurationMs: 200 });
  try {
    const created = await t.api("POST", "/networks", {
      name: "k8s",
      ip_range: "10.0.0.0/16",
      subnets: [{ type: "cloud", network_zone: "eu-central" }],
    });
    assertEquals(created.status, 201);
    const net = created.body.network;
    assertEquals(net.subnets[0], {
      type: "cloud",
      ip_range: "10.0.0.0/24",
      network_zone: "eu-central",
      gateway: "10.0.0.1",
      vswitch_id: null,
    });
    assertEquals(
      (await t.api("POST", "/networks", { name: "k8s", ip_range: "10.1.0.0/16" })).body.error.code,
      "uniqueness_error",
    );
    const badZone = await t.api("POST", `/networks/${net.id}/actions/add_subnet`, {
      type: "cloud",
      network_zone: "mars",
      ip_range: "10.0.5.0/24",
    });
    assertEquals(badZone.body.error.details.fields[0], {
      name: "network_zone",
      messages: ["network zone does not exist"],
    });
    const badGateway = await t.api("POST", `/networks/${net.id}/actions/add_route`, {
      destination: "10.244.0.0/24",
      gateway: "192.168.0.5",
    });
    assertEquals(badGateway.body.error.details.fields[0].name, "gateway");
    const publicDest = await t.api("POST", `/networks/${net.id}/actions/add_route`, {
      destination: "8.8.8.0/24",
      gateway: "10.0.0.2",
    });
    assertEquals(publicDest.body.error.details.fields[0].name, "destination");
    const add = await t.api("POST", `/networks/${net.id}/actions/add_route`, {
      destination: "10.244.0.0/24",
      gateway: "10.0.0.2",
    });
    assertEquals(add.status, 201);
    const busy = await t.api("POST", `/networks/${net.id}/actions/add_route`, {
      destination: "10.244.1.0/24",
      gateway: "10.0.0.3",
    });
    assertEquals([busy.status, busy.body.error.code], [409, "conflict"]);
    await new Promise((r) => setTimeout(r, 250));
    const overlap = await t.api("POST", `/networks/${net.id}/actions/add_route`, {
      destination: "10.244.0.0/25",
      gateway: "10.0.0.3",
    });
    assertEquals(overlap.status, 422);
    assertEquals((await t.api("GET", `/networks/${net.id}`)).body.network.routes, [{
      destination: "10.244.0.0/24",
      gateway: "10.0.0.2",
    }]);
    assertEquals(
      (await t.api("POST", `/networks/${net.id}/actions/delete_route`, {
        destination: "10.244.9.0/24",
        gateway: "10.0.0.2",
      })).status,
      404,
    );
    await new Promise((r) => setTimeout(r, 250));
    assertEquals(
      (await t.api("POST", `/networks/${net.id}/actions/delete_route`, {
        destination: "10.244.0.0/24",
        gateway: "10.0.0.2",
      })).status,
      201,
    );
    const server = t.sim.addServer({ name: "node-1", private_net: [{ network: net.id }] });
    assertEquals(server.private_net[0].ip, "10.0.0.2");
    assertEquals((await t.api("GET", "/networks?name=k8s")).body.networks[0].servers, [server.id]);
    assertEquals((await t.api("DELETE", `/networks/${net.id}`)).status, 409);
    await new Promise((r) => setTimeout(r, 250));
    assertEquals((await t.api("DELETE", `/networks/${net.id}`)).status, 204);
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: load balancer lifecycle with every action and its errors", async () => {
  const t = await startTestSim();
  try {
    applySeed(t.sim, NETWORK_SEED);
    const netId = t.sim.world.findNetwork("k8s")!.id;
    const s1 = t.sim.addServer({
      name: "w1",
      location: "fsn1",
      labels: { pool: "a" },
      private_net: [{ network: netId }],
    });
    const s2 = t.sim.addServer({ name: "w2", location: "nbg1", labels: { pool: "a" } });
    const far = t.sim.addServer({ name: "far", location: "ash" });
    const created = await t.api("POST", "/load_balancers", {
      name: "lb",
      load_balancer_type: "lb11",
      location: "fsn1",
      labels: { "hcloud-ccm/service-uid": "u1" },
      services: [{
        protocol: "tcp",
        listen_port: 80,
        destination_port: 30080,
        proxyprotocol: false,
        health_check: { protocol: "tcp", port: 30080 },
      }],
      targets: [{ type: "server", server: { id: s1.id } }],
    });
    assertEquals(created.status, 201);
    const lb = created.body.load_balancer;
    assertEquals(lb.services[0].health_check, {
      protocol: "tcp",
      port: 30080,
      interval: 15,
      timeout: 10,
      retries: 3,
    });
    assertEquals(lb.targets[0].health_status, [{ listen_port: 80, status: "healthy" }]);
    const path = `/load_balancers/${lb.id}/actions`;
    const code = async (action: string, body: unknown) => {
      const r = await t.api("POST", `${path}/${action}`, body);
      return r.status === 201 ? r.body.action.status : r.body.error.code;
    };
    assertEquals(
      await code("add_service", {
        protocol: "tcp",
        listen_port: 80,
        destination_port: 1,
        proxyprotocol: false,
        health_check: {},
      }),
      "source_port_already_used",
    );
    assertEquals(
      await code("add_service", {
        protocol: "http",
        listen_port: 8080,
        destination_port: 30081,
        http: { sticky_sessions: true },
      }),
      "success",
    );
    assertEquals(
      await code("update_service", {
        listen_port: 8080,
        health_check: { protocol: "http", http: { path: "/healthz" } },
      }),
      "success",
    );
    assertEquals(await code("delete_service", { listen_port: 9999 }), "not_found");
    assertEquals(
      await code("add_target", { type: "server", server: { id: s1.id } }),
      "target_already_defined",
    );
    assertEquals(await code("add_target", { type: "server", server: { id: far.id } }), "unsupported_error");
    assertEquals(
      await code("add_target", { type: "server", server: { id: s2.id }, use_private_ip: true }),
      "load_balancer_not_attached_to_network",
    );
    assertEquals(
      await code("add_target", { type: "label_selector", label_selector: { selector: "pool=a" } }),
      "success",
    );
    assertEquals(
      await code("add_target", { type: "ip", ip: { ip: s1.public_net.ipv4!.ip } }),
      "cloud_resource_ip_not_allowed",
    );
    assertEquals(await code("attach_to_network", { network: netId }), "success");
    assertEquals(await code("attach_to_network", { network: netId }), "load_balancer_already_attached");
    assertEquals(await code("change_algorithm", { type: "least_connections" }), "success");
    assertEquals(await code("change_type", { load_balancer_type: "lb21" }), "success");
    assertEquals(
      await code("change_dns_ptr", { ip: lb.public_net.ipv4.ip, dns_ptr: "lb.example.com" }),
      "success",
    );
    assertEquals(await code("disable_public_interface", {}), "success");
    assertEquals(await code("remove_target", { type: "server", server: { id: s1.id } }), "success");
    assertEquals(await code("remove_target", { type: "server", server: { id: s1.id } }), "not_found");
    const got = (await t.api("GET", `/load_balancers/${lb.id}`)).body.load_balancer;
    assertEquals(got.services.map((s: { listen_port: number }) => s.listen_port), [80, 8080]);
    assertEquals(got.services[1].health_check.http.path, "/healthz");
    assertEquals(got.targets[0].targets.map((x: { server: { id: number } }) => x.server.id), [s1.id, s2.id]);
    assertEquals(got.private_net, [{ network: netId, ip: "10.0.1.3" }]);
    assertEquals([got.algorithm.type, got.load_balancer_type.name, got.public_net.enabled], [
      "least_connections",
      "lb21",
      false,
    ]);
    assertEquals(got.public_net.ipv4.dns_ptr, "lb.example.com");
    assertEquals(
      (await t.api("GET", "/load_balancers?label_selector=hcloud-ccm/service-uid=u1")).body.load_balancers
        .length,
      1,
    );
    assertEquals(await code("change_protection", { delete: true }), "success");
    assertEquals((await t.api("DELETE", `/load_balancers/${lb.id}`)).body.error.code, "protected");
    await code("change_protection", { delete: false });
    assertEquals((await t.api("DELETE", `/load_balancers/${lb.id}`)).status, 204);
    assertEquals(
      (await t.api("GET", "/load_balancer_types?name=lb31")).body.load_balancer_types[0].max_targets,
      150,
    );
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: certificates, catalog, faults and audit log", async () => {
  const t = await startTestSim();
  try {
    const up = await t.api("POST", "/certificates", {
      name: "c1",
      certificate: EXAMPLE_CERT,
      private_key: EXAMPLE_KEY,
    });
    assertEquals([up.status, up.body.certificate.type], [201, "uploaded"]);
    const managed = await t.api("POST", "/certificates", {
      name: "c2",
      type: "managed",
      domain_names: ["a.example.com"],
    });
    assertEquals([managed.body.certificate.type, managed.body.action.command], [
      "managed",
      "create_certificate",
    ]);
    assertEquals((await t.api("GET", "/certificates?type=managed")).body.certificates.length, 1);
    assertEquals(
      (await t.api("POST", "/certificates", { name: "c3", type: "managed" })).body.error.details.fields[0]
        .name,
      "domain_names",
    );
    assertEquals((await t.api("GET", "/locations?name=fsn1")).body.locations[0].network_zone, "eu-central");
    assertEquals((await t.api("GET", "/datacenters")).body.datacenters.length, 6);
    assertEquals((await t.api("GET", "/server_types?name=cpx21")).body.server_types[0].cores, 3);

    t.sim.control.setFaults({
      rules: [{ match: "^GET /locations$", status: 503, code: "unavailable", count: 1 }, {
        match: "^GET /server_types$",
        status: 502,
        code: "bad_gateway",
        html: true,
        count: 1,
      }],
    });
    assertEquals((await t.api("GET", "/locations")).body.error.code, "unavailable");
    assertEquals((await t.api("GET", "/locations")).status, 200);
    const html = await t.api("GET", "/server_types");
    assertEquals(html.status, 502);
    assertMatch(String(html.body), /<html>/);
    t.sim.control.setFaults({ rateLimitBurst: 2 });
    assertEquals([
      (await t.api("GET", "/locations")).status,
      (await t.api("GET", "/locations")).status,
      (await t.api("GET", "/locations")).status,
    ], [429, 429, 200]);
    const audit = await (await fetch(`${t.sim.url}/_sim/audit`)).json();
    assertEquals(audit.by_route["GET /locations"], 6);
    assertEquals(audit.by_status["429"], 2);
    assertEquals(audit.entries[0].userAgent.length > 0, true);
    assertEquals(t.sim.count(/^GET \/locations$/), 6);
  } finally {
    await t.finish();
  }
});

Deno.test("simulator: a Network holds 100 routes and 100 servers; beyond, 403 resource_limit_exceeded", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    applySeed(t.sim, NETWORK_SEED);
    const net = t.sim.world.findNetwork("k8s")!;
    assertEquals([t.sim.world.networkLimits.routes, t.sim.world.networkLimits.servers], [100, 100]);
    for (let i = 0; i < 100; i++) t.sim.addServer({ name: `s${i}`, private_net: [{ network: "k8s" }] });
    // The 101st server: refused at creation and at attach, and nothing is made.
    const created = await t.api("POST", "/servers", {
      name: "s100",
      server_type: "cpx22",
      image: "ubuntu-24.04",
      location: "fsn1",
      networks: [net.id],
    });
    assertEquals([created.status, created.body.error?.code], [403, "resource_limit_exceeded"]);
    assertEquals(t.sim.world.servers.size, 100);
    const loose = t.sim.addServer({ name: "loose" });
    const attach = await t.api("POST", `/servers/${loose.id}/actions/attach_to_network`, { network: net.id });
    assertEquals([attach.status, attach.body.error?.code], [403, "resource_limit_exceeded"]);
    assertEquals(loose.private_net, []);
    // Routes: the 101st is refused, whatever its gateway.
    for (let i = 0; i < 100; i++) {
      const added = await t.api("POST", `/networks/${net.id}/actions/add_route`, {
        destination: `10.${100 + Math.floor(i / 100)}.${i % 256}.0/24`,
        gateway: "10.0.1.2",
      });
      assertEquals(added.status, 201, JSON.stringify(added.body));
    }
    const over = await t.api("POST", `/networks/${net.id}/actions/add_route`, {
      destination: "10.200.0.0/24",
      gateway: "10.0.1.2",
    });
    assertEquals([over.status, over.body.error?.code], [403, "resource_limit_exceeded"]);
    assertMatch(over.body.error.message, /100 routes/);
    assertEquals(net.routes.length, 100);
  } finally {
    await t.finish();
  }
});
