/**
 * The hcloud client and provider against the simulator: typed errors, retries, rate-limit
 * tracking, batched action polling, the server cache's request budget, instance metadata, and
 * unexpected response shapes.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { ActionWaiter, HcloudClient, toServerInfo } from "../hcloud_api/mod.ts";
import { HcloudInstances, HcloudProvider, readHcloudConfig, ServerCache } from "../providers/hcloud/mod.ts";
import { TerminalError } from "../providers/errors.ts";
import { CloudApiError } from "../hcloud_api/mod.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { Registry } from "../lib/metrics.ts";
import { withPriority } from "../lib/priority.ts";

const client = (endpoint: string, extra: Partial<ConstructorParameters<typeof HcloudClient>[0]> = {}) =>
  new HcloudClient({ endpoint, token: DEFAULT_SIM_TOKEN, retryBaseMs: 10, ...extra });

function node(name: string, extra: { providerID?: string; nodeIp?: string; created?: string } = {}): Node {
  return {
    metadata: {
      name,
      creationTimestamp: extra.created ?? new Date(Date.now() - 60_000).toISOString(),
      annotations: extra.nodeIp ? { "alpha.kubernetes.io/provided-node-ip": extra.nodeIp } : {},
    },
    spec: { providerID: extra.providerID },
  };
}

Deno.test("hcloud client: API errors are typed with code and message and never carry the token", async () => {
  const t = await startTestSim();
  try {
    const c = client(t.sim.endpoint);
    const err = await assertRejects(
      () => c.call("get server", c.api.GET("/servers/{id}", { params: { path: { id: 4242 } } })),
      CloudApiError,
    );
    assertEquals([err.status, err.code], [404, "not_found"]);
    assertMatch(err.message, /get server: server not found \(not_found\)/);
    const bad = client(t.sim.endpoint, { token: "secret-token-that-is-wrong" });
    const unauth = await assertRejects(() => bad.call("list", bad.api.GET("/servers")), CloudApiError);
    assertEquals(unauth.code, "unauthorized");
    assert(!unauth.message.includes("secret-token"));
    const invalid = await assertRejects(
      () =>
        c.call("create network", c.api.POST("/networks", { body: { name: "n", ip_range: "1.2.3.0/24" } })),
      CloudApiError,
    );
    assertEquals(invalid.code, "invalid_input");
    assertEquals((invalid.details as { fields: { name: string }[] }).fields[0].name, "ip_range");
    assert(c.rateLimit && c.rateLimit.limit === 3600 && c.rateLimit.remaining < 3600);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud client: reads are retried on 429/5xx, writes only on 429; an HTML 502 is a typed error", async () => {
  const t = await startTestSim();
  try {
    const registry = new Registry();
    const c = client(t.sim.endpoint, { metrics: registry, maxRetries: 3 });
    t.sim.control.setFaults({
      rules: [{ match: "^GET /locations$", status: 503, code: "unavailable", count: 2 }],
    });
    const data = await c.call("locations", c.api.GET("/locations"));
    assertEquals(data.locations.length, 6);
    assertEquals(t.sim.count(/^GET \/locations$/), 3);
    const counter = registry.counter("hcloud_api_requests_total", "");
    assertEquals(counter.get({ api_endpoint: "/locations", method: "get", code: "503" }), 2);
    assertEquals(counter.get({ api_endpoint: "/locations", method: "get", code: "200" }), 1);

    t.sim.control.setFaults({
      rules: [{ match: "^POST /networks$", status: 503, code: "unavailable", count: 1 }],
    });
    const write = await assertRejects(
      () => c.call("create", c.api.POST("/networks", { body: { name: "n", ip_range: "10.0.0.0/16" } })),
      CloudApiError,
    );
    assertEquals(write.code, "unavailable");
    assertEquals(t.sim.count(/^POST \/networks$/), 1, "a write that may have happened is not repeated");
    t.sim.control.setFaults({ rateLimitBurst: 1 });
    await c.call("create", c.api.POST("/networks", { body: { name: "n", ip_range: "10.0.0.0/16" } }));
    assertEquals(t.sim.count(/^POST \/networks$/), 3, "a 429 write is repeated");

    t.sim.control.setFaults({
      rules: [{ match: "^GET /server_types$", status: 502, code: "bad_gateway", html: true }],
    });
    const html = await assertRejects(() => c.call("types", c.api.GET("/server_types")), CloudApiError);
    assertEquals([html.status, html.code], [502, "server_error"]);
    assertEquals(t.sim.count(/^GET \/server_types$/), 4, "1 try + 3 retries");
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud client: unexpected response shapes become typed errors", async () => {
  const fake = (body: string, status = 200) => () =>
    Promise.resolve(new Response(body, { status, headers: { "content-type": "application/json" } }));
  const c1 = client("http://x/v1", { fetch: fake('{"server": null}') });
  const cache = new ServerCache(
    client("http://x/v1", {
      fetch: fake('{"servers":[{"id":1,"name":null}],"meta":{"pagination":{"next_page":null}}}'),
    }),
  );
  const err = await assertRejects(() => cache.get(), CloudApiError);
  assertEquals(err.code, "invalid_response");
  assertMatch(err.message, /server 1 has no valid "name"/);
  const empty = await assertRejects(
    async () =>
      toServerInfo(
        (await c1.call("get", c1.api.GET("/servers/{id}", { params: { path: { id: 1 } } }))).server,
      ),
    CloudApiError,
  );
  assertEquals(empty.code, "invalid_response");
  const c2 = client("http://x/v1", { fetch: fake("<html>oops</html>", 200) });
  assertEquals(
    (await assertRejects(() => c2.call("get", c2.api.GET("/locations")), CloudApiError)).code,
    "invalid_response",
  );
  const c3 = client("http://x/v1", { fetch: fake('{"servers": "nope"}') });
  assertEquals(
    (await assertRejects(
      () => c3.listAll("list", "servers", (page) => c3.api.GET("/servers", { params: { query: { page } } })),
      CloudApiError,
    )).code,
    "invalid_response",
  );
});

Deno.test("action waiter: concurrent waits share one poll per interval; failures carry the action's error", async () => {
  const t = await startTestSim({ actionDurationMs: 300 });
  try {
    const c = client(t.sim.endpoint);
    const waiter = new ActionWaiter(c, { intervalMs: 100 });
    const servers = Array.from({ length: 30 }, (_, i) => t.sim.addServer({ name: `s${i}` }));
    const actions = await Promise.all(
      servers.map((s) =>
        c.call("poweroff", c.api.POST("/servers/{id}/actions/poweroff", { params: { path: { id: s.id } } }))
      ),
    );
    await Promise.all(actions.map((a) => waiter.wait(a.action)));
    const polls = t.sim.count(/^GET \/actions$/);
    // 30 actions of 300 ms polled every 100 ms: ~3-4 rounds of 2 requests (25 IDs each), not 30 × rounds.
    assert(polls <= 10, `polls: ${polls}`);
    t.sim.control.failNextActions(1);
    const failing = await c.call(
      "poweron",
      c.api.POST("/servers/{id}/actions/poweron", { params: { path: { id: servers[0].id } } }),
    );
    const err = await assertRejects(() => waiter.wait(failing.action), CloudApiError);
    assertEquals(err.code, "action_failed");
  } finally {
    await t.finish();
  }
});

Deno.test("server cache: one list per max age serves every lookup; notBefore forces at most one re-list", async () => {
  const t = await startTestSim();
  try {
    for (let i = 0; i < 120; i++) t.sim.addServer({ name: `n${i}` });
    const cache = new ServerCache(client(t.sim.endpoint), { maxAgeMs: 300 });
    const lookups = await Promise.all(
      Array.from({ length: 100 }, (_, i) => cache.get().then((s) => s.byName.get(`n${i}`)?.id)),
    );
    assert(lookups.every((id) => typeof id === "number"));
    assertEquals(
      t.sim.count(/^GET \/servers$/),
      3,
      "120 servers = 3 pages, listed once for 100 concurrent lookups",
    );
    await cache.get({ notBefore: Date.now() - 60_000 });
    assertEquals(t.sim.count(/^GET \/servers$/), 3, "an older notBefore is already met");
    await cache.get({ notBefore: Date.now() + 1 });
    assertEquals(t.sim.count(/^GET \/servers$/), 6);
    await new Promise((r) => setTimeout(r, 320));
    await Promise.all([cache.get(), cache.get()]);
    assertEquals(t.sim.count(/^GET \/servers$/), 9, "expired: one shared re-list");
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud instances: metadata, addresses by family, matching by name and node IP, shutdown and deletion", async () => {
  const t = await startTestSim();
  try {
    applySeed(t.sim, {
      networks: [{
        name: "k8s",
        ip_range: "10.0.0.0/8",
        subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
      }],
    });
    const { config } = await readHcloudConfig({
      HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
      HCLOUD_ENDPOINT: t.sim.endpoint,
      HCLOUD_NETWORK: "k8s",
    });
    const provider = new HcloudProvider(config);
    await provider.initialize(undefined, AbortSignal.timeout(5_000));
    const cp = t.sim.addServer({
      name: "cp",
      server_type: "cpx21",
      location: "nbg1",
      private_net: [{ network: "k8s" }],
    });
    const v6only = t.sim.addServer({ name: "v6", ipv4: false, location: "hel1" });
    const meta = await provider.instances.instanceMetadata(node("cp"));
    assertEquals(meta, {
      providerID: `hcloud://${cp.id}`,
      instanceType: "cpx21",
      region: "nbg1",
      zone: "nbg1-dc3",
      nodeAddresses: [
        { type: "Hostname", address: "cp" },
        { type: "ExternalIP", address: cp.public_net.ipv4!.ip },
        { type: "InternalIP", address: "10.0.0.2" },
      ],
      additionalLabels: { "instance.hetzner.cloud/provided-by": "cloud" },
    });
    const dual = new HcloudInstances(provider.context, {
      addressFamily: "dualstack",
      zoneLabelEnabled: false,
    });
    const v6 = await dual.instanceMetadata(node("other-name", { providerID: `hcloud://${v6only.id}` }));
    assertEquals(v6?.zone, undefined);
    // HCLOUD_INSTANCES_TOPOLOGY=location: zone = the location, region = its network zone.
    const located = new HcloudInstances(provider.context, {
      addressFamily: "ipv4",
      zoneLabelEnabled: true,
      topology: "location",
    });
    const loc = await located.instanceMetadata(node("cp"));
    assertEquals([loc?.zone, loc?.region], ["nbg1", "eu-central"]);
    assertEquals(v6?.nodeAddresses, [
      { type: "Hostname", address: "v6" },
      { type: "ExternalIP", address: v6only.public_net.ipv6!.ip.replace("::/64", "::1") },
    ]);
    // Beyond the official CCM: a node named differently is found by its kubelet node IP.
    const byIp = await provider.instances.instanceMetadata(node("wg-node-7", { nodeIp: "10.0.0.2" }));
    assertEquals(byIp?.providerID, `hcloud://${cp.id}`);
    assertEquals(
      await provider.instances.instanceMetadata(node("unknown", { nodeIp: "10.9.9.9" })),
      undefined,
    );
    await assertRejects(
      () => provider.instances.instanceMetadata(node("robot", { providerID: "hrobot://123" })),
      TerminalError,
    );
    assertEquals(
      await provider.instances.instanceExists(node("robot", { providerID: "hcloud://bm-12" })),
      true,
    );

    assertEquals(
      await provider.instances.instanceShutdown(node("cp", { providerID: `hcloud://${cp.id}` })),
      false,
    );
    t.sim.control.setPower(cp.id, false);
    provider.cache.invalidate();
    assertEquals(
      await provider.instances.instanceShutdown(node("cp", { providerID: `hcloud://${cp.id}` })),
      true,
    );
    t.sim.control.vanishServer(cp.id);
    provider.cache.invalidate(); // as if the max age passed
    const before = t.sim.count(/^GET \/servers\/\{id\}$/);
    assertEquals(
      await provider.instances.instanceExists(node("cp", { providerID: `hcloud://${cp.id}` })),
      false,
    );
    assertEquals(
      t.sim.count(/^GET \/servers\/\{id\}$/),
      before + 1,
      "a miss is confirmed once before a deletion",
    );
    // A Node newer than the cached list forces one fresh list, so a just-created server is found.
    const late = t.sim.addServer({ name: "late" });
    assertEquals(
      await provider.instances.instanceExists(
        node("late", { created: new Date(Date.now() + 5).toISOString() }),
      ),
      true,
    );
    assertEquals(
      (await provider.instances.instanceMetadata(node("late")))?.providerID,
      `hcloud://${late.id}`,
    );
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud transport: a low budget holds less important work and lets node work through", async () => {
  const registry = new Registry();
  const fake = () =>
    Promise.resolve(
      new Response('{"locations":[],"meta":{"pagination":{"next_page":null}}}', {
        headers: {
          "content-type": "application/json",
          "ratelimit-limit": "3600",
          "ratelimit-remaining": "5",
          "ratelimit-reset": "0",
        },
      }),
    );
  const c = client("http://x/v1", { fetch: fake, metrics: registry });
  await c.call("first", c.api.GET("/locations")); // learns: 5 of 3600 left
  await withPriority("node", () => c.call("node work", c.api.GET("/locations")));
  const held = new AbortController();
  let done = false;
  const refresh = withPriority(
    "refresh",
    () => c.call("refresh", c.api.GET("/locations", { signal: held.signal })),
  ).then(
    () => done = true,
    () => {},
  );
  await new Promise((r) => setTimeout(r, 200));
  assertEquals(done, false, "refresh work waits while the bucket is below its reserve");
  assertEquals(registry.counter("hcloud_api_budget_waits_total", "").get({ priority: "refresh" }), 1);
  held.abort();
  await refresh;
});

Deno.test("hcloud transport: after a 429 every request pauses about a token's time, then all go through", async () => {
  // The API answers 429 while the project's bucket is empty (here: the first 300 ms).
  const emptyUntil = Date.now() + 300;
  const sent: { at: number; status: number }[] = [];
  const fake = () => {
    const status = Date.now() < emptyUntil ? 429 : 200;
    sent.push({ at: Date.now(), status });
    return Promise.resolve(
      new Response(
        status === 429
          ? '{"error":{"code":"rate_limit_exceeded","message":"limit reached"}}'
          : '{"locations":[],"meta":{"pagination":{"next_page":null}}}',
        { status, headers: { "content-type": "application/json" } },
      ),
    );
  };
  const c = client("http://x/v1", { fetch: fake, retryBaseMs: 400, maxRetries: 5 });
  const first = c.call("first", c.api.GET("/locations"));
  await new Promise((r) => setTimeout(r, 100));
  // Sent during the pause that the first one's 429 started: they wait instead of earning 429s.
  await Promise.all([
    first,
    ...Array.from({ length: 9 }, (_, i) => c.call(`read ${i}`, c.api.GET("/locations"))),
  ]);
  assertEquals(
    sent.map((s) => s.status).filter((s) => s === 429).length,
    1,
    "only the first met the empty bucket",
  );
  assertEquals(sent.filter((s) => s.status === 200).length, 10, "every request succeeded after the pause");
  const firstOk = sent.find((s) => s.status === 200)!.at;
  assert(firstOk - sent[0].at < 1_500, "the pause is about one retry base, not an exponential backoff");
});
