/**
 * The hcloud load balancers against the simulator: every annotation family of the official CCM,
 * the environment defaults, and minimal diffs.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals, assertRejects } from "../../../testing/assert.ts";
import { startTestSim } from "../../../testing/sim_harness.ts";
import { applySeed } from "../../../hcloud_sim/control.ts";
import { DEFAULT_SIM_TOKEN } from "../../../hcloud_sim/simulator.ts";
import { HcloudProvider, readHcloudConfig } from "../mod.ts";
import { rootCause, TerminalError, warningsOf } from "../../errors.ts";
import { Registry } from "../../../lib/metrics.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY } from "../../../tests/fixtures/example_com.ts";

const P = "load-balancer.hetzner.cloud/";
let uidCounter = 0;

function svc(annotations: Record<string, string>, spec: Partial<NonNullable<Service["spec"]>> = {}): Service {
  uidCounter++;
  return {
    metadata: { name: `s${uidCounter}`, namespace: "default", uid: `0000-${uidCounter}`, annotations },
    spec: {
      type: "LoadBalancer",
      ports: [{ name: "p", port: 443, protocol: "TCP", nodePort: 30443 }],
      ...spec,
    },
  };
}

async function setup(env: Record<string, string> = {}) {
  const t = await startTestSim();
  applySeed(t.sim, {
    networks: [{
      name: "k8s",
      ip_range: "10.0.0.0/8",
      subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
    }],
  });
  const { config, errors } = await readHcloudConfig({
    HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
    HCLOUD_ENDPOINT: t.sim.endpoint,
    HCLOUD_NETWORK: "k8s",
    ...env,
  });
  assertEquals(errors, []);
  const registry = new Registry();
  const provider = new HcloudProvider(config, registry);
  // The app hands the kube-system UID in; label-selector targets are keyed to it.
  await provider.initialize(
    { clusterId: "7b0d0c3e-0000-4000-8000-000000000001" },
    AbortSignal.timeout(5_000),
  );
  const servers = [1, 2].map((i) =>
    t.sim.addServer({ name: `n${i}`, location: "nbg1", labels: {}, private_net: [{ network: "k8s" }] })
  );
  const nodes: Node[] = servers.map((s, i) => ({
    metadata: { name: `n${i + 1}`, labels: { pool: i === 0 ? "edge" : "core" } },
    spec: { providerID: `hcloud://${s.id}` },
  }));
  const lbOf = (service: Service) =>
    [...t.sim.world.loadBalancers.values()].find((lb) =>
      lb.labels["hcloud-ccm/service-uid"] === service.metadata!.uid
    )!;
  return { t, provider, lbs: provider.loadBalancers!, nodes, servers, lbOf, registry };
}

Deno.test("hcloud LBs: HTTPS with an uploaded certificate by name, HTTP options and a custom health check", async () => {
  const { t, lbs, nodes, lbOf } = await setup();
  try {
    const cert = await t.api("POST", "/certificates", {
      name: "shop-cert",
      certificate: EXAMPLE_CERT,
      private_key: EXAMPLE_KEY,
    });
    const service = svc({
      [`${P}location`]: "nbg1",
      [`${P}protocol`]: "https",
      [`${P}http-certificates`]: "shop-cert",
      [`${P}http-redirect-http`]: "true",
      [`${P}http-sticky-sessions`]: "true",
      [`${P}http-cookie-name`]: "SHOP",
      [`${P}http-cookie-lifetime`]: "1h",
      [`${P}health-check-protocol`]: "https",
      [`${P}health-check-port`]: "8443",
      [`${P}health-check-http-path`]: "/ready",
      [`${P}health-check-http-domain`]: "shop.example.com",
      [`${P}health-check-http-status-codes`]: "200,3??",
      [`${P}health-check-interval`]: "7s",
      [`${P}health-check-timeout`]: "4s",
      [`${P}health-check-retries`]: "2",
    });
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    const s = lbOf(service).services[0];
    assertEquals([
      s.protocol,
      s.http?.certificates,
      s.http?.redirect_http,
      s.http?.sticky_sessions,
      s.http?.cookie_name,
      s.http?.cookie_lifetime,
    ], [
      "https",
      [cert.body.certificate.id],
      true,
      true,
      "SHOP",
      3600,
    ]);
    assertEquals(s.health_check, {
      protocol: "http",
      port: 8443,
      interval: 7,
      timeout: 4,
      retries: 2,
      http: {
        domain: "shop.example.com",
        path: "/ready",
        response: "",
        status_codes: ["200", "3??"],
        tls: true,
      },
    });
    const before = t.sim.audit.length;
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    assertEquals(
      t.sim.audit.slice(before).filter((e) => e.method !== "GET").length,
      0,
      "unchanged: no mutating call",
    );
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: managed certificate created once and found again by the Service UID", async () => {
  const { t, lbs, nodes, lbOf } = await setup();
  try {
    const service = svc({
      [`${P}location`]: "nbg1",
      [`${P}protocol`]: "https",
      [`${P}certificate-type`]: "managed",
      [`${P}http-managed-certificate-domains`]: "a.example.com,b.example.com",
    });
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    const certs = [...t.sim.world.certificates.values()];
    assertEquals(certs.length, 1);
    assertEquals([certs[0].type, certs[0].name, certs[0].domain_names], [
      "managed",
      "ccm-managed-certificate-0000-2",
      ["a.example.com", "b.example.com"],
    ]);
    assertEquals(lbOf(service).services[0].http?.certificates, [certs[0].id]);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: ingress variants (hostname, proxy protocol, IPv6 and private ingress off) and public interface", async () => {
  const { t, lbs, nodes, lbOf } = await setup();
  try {
    const host = await lbs.ensureLoadBalancer({
      clusterName: "k",
      service: svc({ [`${P}location`]: "nbg1", [`${P}hostname`]: "lb.example.com" }),
      nodes,
    });
    assertEquals(host.ingress, [{ hostname: "lb.example.com" }]);
    const proxy = svc({
      [`${P}location`]: "nbg1",
      [`${P}uses-proxyprotocol`]: "true",
      [`${P}ipv6-disabled`]: "true",
      [`${P}disable-private-ingress`]: "true",
    });
    const status = await lbs.ensureLoadBalancer({ clusterName: "k", service: proxy, nodes });
    assertEquals(status.ingress, [{ ip: lbOf(proxy).public_net.ipv4.ip!, ipMode: "Proxy" }]);
    assertEquals(lbOf(proxy).services[0].proxyprotocol, true);
    const privateOnly = svc({ [`${P}location`]: "nbg1", [`${P}disable-public-network`]: "true" });
    const priv = await lbs.ensureLoadBalancer({ clusterName: "k", service: privateOnly, nodes });
    assertEquals(lbOf(privateOnly).public_net.enabled, false);
    assertEquals(priv.ingress, [{ ip: lbOf(privateOnly).private_net[0].ip!, ipMode: "VIP" }]);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: private IP targets, fixed private IPv4, rDNS, type, protection and node selector", async () => {
  const { t, lbs, nodes, servers, lbOf } = await setup();
  try {
    const service = svc({
      [`${P}location`]: "nbg1",
      [`${P}use-private-ip`]: "true",
      [`${P}private-ipv4`]: "10.0.9.9",
      [`${P}ipv4-rdns`]: "lb.example.com",
      [`${P}type`]: "lb21",
      [`${P}protection-delete`]: "true",
      [`${P}node-selector`]: "pool=edge",
    });
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    const lb = lbOf(service);
    assertEquals(lb.targets.map((x) => [x.server?.id, x.use_private_ip]), [[servers[0].id, true]]);
    assertEquals(lb.private_net.map((p) => p.ip), ["10.0.9.9"]);
    assertEquals([lb.public_net.ipv4.dns_ptr, lb.load_balancer_type.name, lb.protection.delete], [
      "lb.example.com",
      "lb21",
      true,
    ]);

    // Change the fixed IP, drop private-IP targets and widen the selector: only those changes are made.
    service.metadata!.annotations![`${P}private-ipv4`] = "10.0.9.10";
    service.metadata!.annotations![`${P}use-private-ip`] = "false";
    delete service.metadata!.annotations![`${P}node-selector`];
    const start = t.sim.audit.length;
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    const routes = t.sim.audit.slice(start).filter((e) => e.method !== "GET").map((e) =>
      e.route.replace("POST /load_balancers/{id}/actions/", "")
    );
    // Without a node selector the targets become one label selector: the servers get the label
    // (one update each), then the label target is added before the old server target is removed.
    assertEquals(routes, [
      "PUT /servers/{id}",
      "PUT /servers/{id}",
      "detach_from_network",
      "attach_to_network",
      "add_target",
      "remove_target",
    ]);
    assertEquals(lbOf(service).targets.map((x) => [x.type, x.use_private_ip]), [["label_selector", false]]);
    assertEquals(lbOf(service).private_net.map((p) => p.ip), ["10.0.9.10"]);
    await lbs.ensureLoadBalancerDeleted("k", service);
    assert(lbOf(service), "protected: kept");
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: environment defaults apply while annotations are absent; missing location is an input error", async () => {
  const { t, lbs, nodes, lbOf } = await setup({
    HCLOUD_LOAD_BALANCERS_LOCATION: "nbg1",
    HCLOUD_LOAD_BALANCERS_TYPE: "lb31",
    HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE: "least_connections",
    HCLOUD_LOAD_BALANCERS_USES_PROXYPROTOCOL: "true",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL: "20s",
    HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: "4",
    HCLOUD_LOAD_BALANCERS_DISABLE_IPV6: "true",
  });
  try {
    const service = svc({});
    const status = await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    const lb = lbOf(service);
    assertEquals([lb.location.name, lb.load_balancer_type.name, lb.algorithm.type], [
      "nbg1",
      "lb31",
      "least_connections",
    ]);
    assertEquals([
      lb.services[0].proxyprotocol,
      lb.services[0].health_check.interval,
      lb.services[0].health_check.retries,
    ], [true, 20, 4]);
    assert(status.ingress.every((i) => !i.ip?.includes(":")), "no IPv6 ingress");
    const cleared = svc({ [`${P}location`]: "" });
    const err = await rejectsTerminal(() =>
      lbs.ensureLoadBalancer({ clusterName: "k", service: cleared, nodes })
    );
    assert(err.message.includes("no location"), err.message);
  } finally {
    await t.finish();
  }
});

Deno.test("orphan sweep: deletes this cluster's load balancers whose Service is gone, on every page", async () => {
  const { t, provider, lbs, nodes, lbOf } = await setup({ HCLOUD_LOAD_BALANCERS_LOCATION: "nbg1" });
  try {
    provider.hcloudLoadBalancers!.useCluster({ clusterId: "cluster-a" });
    const services = Array.from({ length: 23 }, () => svc({}));
    for (const s of services) await lbs.ensureLoadBalancer({ clusterName: "k", service: s, nodes });
    // Old enough to be swept (a younger one may still be getting its Service's finalizer).
    for (const id of t.sim.world.loadBalancers.keys()) t.sim.control.backdateLoadBalancer(id, 120_000);
    const gone = [services[2], services[21], services[22]]; // the last two are on the third page of 10
    t.sim.control.protectLoadBalancer(lbOf(services[22]).id, true);
    const foreign = lbOf(services[5]);
    t.sim.control.setLabels("load_balancer", foreign.id, {
      ...foreign.labels,
      "deno-ccm/cluster-id": "cluster-b",
    });
    const live = new Set(services.filter((s) => !gone.includes(s)).map((s) => s.metadata!.uid!));
    live.delete(services[5].metadata!.uid!); // its Service is gone too, but it is another cluster's

    const deleted = await lbs.inventory!.sweepOrphans(live);

    assertEquals(deleted, 2);
    const left = new Set(
      [...t.sim.world.loadBalancers.values()].map((lb) => lb.labels["hcloud-ccm/service-uid"]),
    );
    assertEquals([left.has(gone[0].metadata!.uid!), left.has(gone[1].metadata!.uid!)], [false, false]);
    assert(left.has(gone[2].metadata!.uid!), "a delete-protected load balancer is kept");
    assert(left.has(services[5].metadata!.uid!), "another cluster's load balancer is kept");
    assertEquals(t.sim.world.loadBalancers.size, 21);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: more eligible Nodes than the type's max_targets is a MaxTargetsReached warning naming the limit", async () => {
  const { t, lbs, nodes } = await setup();
  try {
    const more: Node[] = Array.from({ length: 24 }, (_, i) => {
      const s = t.sim.addServer({ name: `m${i}`, location: "nbg1" });
      return { metadata: { name: `m${i}` }, spec: { providerID: `hcloud://${s.id}` } };
    });
    const service = svc({ [`${P}location`]: "nbg1", [`${P}type`]: "lb11" });
    const fits = await lbs.ensureLoadBalancer({
      clusterName: "k",
      service,
      nodes: [...nodes, ...more.slice(0, 23)],
    });
    assertEquals(fits.warnings?.filter((w) => w.reason === "MaxTargetsReached"), []);
    const result = await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes: [...nodes, ...more] });
    const warning = result.warnings?.find((w) => w.reason === "MaxTargetsReached");
    assert(
      warning?.message.includes("26 eligible Nodes") && warning.message.includes("allows 25"),
      warning?.message,
    );
    const update = await lbs.updateLoadBalancer({ clusterName: "k", service, nodes: [...nodes, ...more] });
    assertEquals(update?.warnings?.map((w) => w.reason), ["MaxTargetsReached"]);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: fields a Hetzner balancer cannot honour are named; none is created that would serve nothing or be public against source ranges", async () => {
  const { t, lbs, nodes, lbOf } = await setup({ HCLOUD_LOAD_BALANCERS_LOCATION: "nbg1" });
  try {
    const refused = async (service: Service, text: string) => {
      const err = await rejectsTerminal(() => lbs.ensureLoadBalancer({ clusterName: "k", service, nodes }));
      assert(err.message.includes(text), err.message);
      assertEquals(lbOf(service), undefined, "nothing created");
    };
    await refused(svc({}, { ports: [{ port: 53, protocol: "UDP", nodePort: 30053 }] }), "no TCP port");
    await refused(
      svc({}, { allocateLoadBalancerNodePorts: false, ports: [{ port: 80, protocol: "TCP" }] }),
      "allocateLoadBalancerNodePorts is false",
    );
    await refused(svc({}, { loadBalancerSourceRanges: ["10.1.0.0/16"] }), "cannot be enforced");

    // Private only: created, with the warning; loadBalancerIP is named too.
    const priv = svc({ [`${P}disable-public-network`]: "true" }, {
      loadBalancerSourceRanges: ["10.1.0.0/16"],
      loadBalancerIP: "203.0.113.77",
    });
    const result = await lbs.ensureLoadBalancer({ clusterName: "k", service: priv, nodes });
    assert(lbOf(priv), "created");
    assertEquals(result.warnings?.map((w) => w.reason).sort(), [
      "LoadBalancerTypeUnconfigured",
      "UnsupportedLoadBalancerIP",
      "UnsupportedLoadBalancerSourceRanges",
    ]);

    // An existing public balancer keeps serving when source ranges appear; the Service is told.
    const open = svc({});
    await lbs.ensureLoadBalancer({ clusterName: "k", service: open, nodes });
    open.spec!.loadBalancerSourceRanges = ["10.1.0.0/16", "0.0.0.0/0"];
    const again = await lbs.ensureLoadBalancer({ clusterName: "k", service: open, nodes });
    assert(again.warnings?.some((w) => w.reason === "UnsupportedLoadBalancerSourceRanges"));
    assert(lbOf(open), "kept");
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: more ports than the type's services is an input error naming type and limit, before any change", async () => {
  const { t, lbs, nodes, lbOf } = await setup({ HCLOUD_LOAD_BALANCERS_LOCATION: "nbg1" });
  try {
    const ports = Array.from(
      { length: 6 },
      (_, i) => ({ port: 8000 + i, protocol: "TCP", nodePort: 30000 + i }),
    );
    const service = svc({ [`${P}type`]: "lb11" }, { ports });
    const before = t.sim.audit.filter((e) => e.method !== "GET").length;
    const err = await rejectsTerminal(() => lbs.ensureLoadBalancer({ clusterName: "k", service, nodes }));
    assert(
      err.message.includes("6 ports to serve, but load balancer type lb11 allows 5 services"),
      err.message,
    );
    assertEquals(lbOf(service), undefined);
    assertEquals(t.sim.audit.filter((e) => e.method !== "GET").length, before, "no cloud change");
  } finally {
    await t.finish();
  }
});

/** Expects an input error (as the reconcile runtime reads it: through the ProviderError around it). */
async function rejectsTerminal(fn: () => Promise<unknown>): Promise<Error> {
  const err = await assertRejects(fn, Error);
  assert(rootCause(err) instanceof TerminalError, `expected an input error, got ${err.name}: ${err.message}`);
  return err;
}

Deno.test("hcloud LBs: labels of the operator's and the owner's choice on the balancer, never the CCM's own", async () => {
  const L = "service.deno-ccm.io/load-balancer-labels";
  const { t, lbs, nodes, lbOf } = await setup({ HCLOUD_LOAD_BALANCERS_LABELS: "env=prod,team=platform" });
  try {
    const service = svc({ [`${P}location`]: "nbg1", [L]: "team=web,app=shop" });
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    const labels = lbOf(service).labels;
    assertEquals([labels.env, labels.team, labels.app], ["prod", "platform", "shop"], "the operator's win");
    assertEquals(labels["hcloud-ccm/service-uid"], service.metadata!.uid);
    // A changed annotation is applied with the next sync.
    service.metadata!.annotations![L] = "app=cart";
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    assertEquals(lbOf(service).labels.app, "cart");
    // A tenant naming the CCM's labels (to pass for another Service, or to consent) changes nothing.
    const other = svc({ [`${P}location`]: "nbg1" });
    await lbs.ensureLoadBalancer({ clusterName: "k", service: other, nodes });
    const before = t.sim.audit.length;
    service.metadata!.annotations![L] = `hcloud-ccm/service-uid=${other.metadata!.uid}`;
    const err = await rejectsTerminal(() => lbs.ensureLoadBalancer({ clusterName: "k", service, nodes }));
    assert(err.message.includes(L) && err.message.includes("hcloud-ccm/service-uid"), err.message);
    assertEquals(t.sim.audit.slice(before).filter((e) => e.method !== "GET").length, 0, "no cloud write");
    assertEquals(lbOf(service).labels.app, "cart");
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: the targets' health comes with the drift list, as a metric, at no extra call", async () => {
  const { t, lbs, nodes, servers, lbOf, registry } = await setup();
  try {
    const service = svc({ [`${P}location`]: "nbg1", [`${P}use-private-ip`]: "false" });
    const other = svc({ [`${P}location`]: "nbg1", [`${P}node-selector`]: "pool=edge" });
    await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    await lbs.ensureLoadBalancer({ clusterName: "k", service: other, nodes });
    // The cluster's label-selector target resolves to the servers the node sync labels.
    await lbs.nodeTargets!.sync("k", nodes);
    t.sim.control.setTargetHealth(lbOf(service).id, servers[1].id, "unhealthy");
    t.sim.control.setTargetHealth(lbOf(other).id, servers[0].id, "unknown");
    const before = t.sim.audit.length;
    await lbs.inventory!.drift();
    assertEquals(t.sim.audit.length - before, 1, "one list, as the drift check makes anyway");
    const targets = registry.gauge("hcloud_load_balancer_targets", "");
    const names = new Map([service, other].map((s) => [s, lbOf(s).name]));
    const of = (s: Service, health: string) =>
      targets.get({ load_balancer: names.get(s)!, service: `default/${s.metadata!.name}`, health });
    assertEquals([of(service, "healthy"), of(service, "unhealthy"), of(service, "unknown")], [1, 1, 0]);
    // A node selector's balancer targets its one server.
    assertEquals([of(other, "healthy"), of(other, "unhealthy"), of(other, "unknown")], [0, 0, 1]);
    // A balancer that is gone takes its series with it.
    await lbs.ensureLoadBalancerDeleted("k", other);
    await lbs.inventory!.drift();
    assertEquals(of(other, "unknown"), 0);
    assertEquals(of(service, "unhealthy"), 1);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: a refused value comes with the Service's other problems, so one edit fixes all", async () => {
  const { t, lbs, nodes } = await setup();
  try {
    // The trial's file: two bad values, a typo'd annotation and source ranges, all said in one sync.
    const service = svc({
      [`${P}location`]: "nbg1",
      [`${P}health-check-interval`]: "2s",
      [`${P}protocol`]: "htps",
      [`${P}lcoation`]: "fsn1",
    }, { loadBalancerSourceRanges: ["10.1.0.0/16"] });
    const err = await assertRejects(
      () => lbs.ensureLoadBalancer({ clusterName: "k", service, nodes }),
      Error,
    );
    assert(/"htps" is not one of tcp, http, https/.test(err.message), err.message);
    assert(/health-check-interval: "2s" must be between/.test(err.message));
    assertEquals(warningsOf(err).map((w) => w.reason).sort(), [
      "LoadBalancerTypeUnconfigured",
      "UnknownAnnotation",
      "UnsupportedLoadBalancerSourceRanges",
    ]);
    assertEquals(t.sim.world.loadBalancers.size, 0, "nothing is created for a refused value");
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: leaving a shared balancer says the balancer stays, and for whom", async () => {
  const { t, lbs, nodes } = await setup();
  const S = "service.deno-ccm.io/load-balancer-share";
  const shop = (port: number, extra: Record<string, string> = {}) =>
    svc({ [`${P}location`]: "nbg1", [S]: "shop", ...extra }, {
      ports: [{ name: "p", port, protocol: "TCP", nodePort: 30000 + port }],
    });
  try {
    const [a, b, c] = [shop(80), shop(8080), shop(9090, { [`${P}type`]: "lb21" })];
    await lbs.ensureLoadBalancer({ clusterName: "k", service: a, nodes });
    await lbs.ensureLoadBalancer({ clusterName: "k", service: b, nodes });
    // Only the setting that differs is named (the location is the same on all three).
    const refused = await assertRejects(
      () => lbs.ensureLoadBalancer({ clusterName: "k", service: c, nodes }),
      Error,
    );
    assert(/whole balancer \(type=lb21\) differ/.test(refused.message), refused.message);
    const [lb] = t.sim.world.loadBalancers.values();
    const leftA = await lbs.ensureLoadBalancerDeleted("k", a);
    assertEquals(
      leftA?.outcome,
      `Removed the Service's ports from shared load balancer ${lb.name}; it stays for Service default/${
        b.metadata!.name
      }`,
    );
    const leftB = await lbs.ensureLoadBalancerDeleted("k", b);
    assertEquals(leftB?.outcome, `Deleted shared load balancer ${lb.name} (the last Service on it)`);
    assertEquals(t.sim.world.loadBalancers.size, 0);
  } finally {
    await t.finish();
  }
});

Deno.test("hcloud LBs: opted in, the ingress follows the Service's IP families and their order", async () => {
  const { t, lbs, nodes } = await setup();
  const A = "service.deno-ccm.io/ingress-follows-ip-families";
  try {
    const ips = (result: { ingress?: { ip?: string }[] }) => (result.ingress ?? []).map((i) => i.ip!);
    const family = (ip: string) => ip.includes(":") ? "IPv6" : "IPv4";
    const shapes: [string[] | undefined, Record<string, string>, string[]][] = [
      // Off (the default, as the official CCM): every address whatever the families.
      [["IPv6"], {}, ["IPv4", "IPv6", "IPv4"]],
      [["IPv4"], { [A]: "true" }, ["IPv4", "IPv4"]],
      [["IPv6"], { [A]: "true" }, ["IPv6"]],
      [["IPv6", "IPv4"], { [A]: "true" }, ["IPv6", "IPv4", "IPv4"]],
      // ipv6-disabled keeps its meaning: an IPv6-only Service then has no public address listed.
      [["IPv6", "IPv4"], { [A]: "true", [`${P}ipv6-disabled`]: "true" }, ["IPv4", "IPv4"]],
      // No families known (an old apiserver): every address.
      [undefined, { [A]: "true" }, ["IPv4", "IPv6", "IPv4"]],
    ];
    for (const [families, annotations, expected] of shapes) {
      const service = svc({ [`${P}location`]: "nbg1", [`${P}use-private-ip`]: "true", ...annotations }, {
        ...(families ? { ipFamilies: families } : {}),
      });
      const result = await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
      assertEquals(ips(result).map(family), expected, `${families} ${JSON.stringify(annotations)}`);
    }
    // Hostile: a value that is not a boolean is refused before any cloud call; the status can only
    // ever list addresses the balancer has (nothing the tenant names).
    const before = t.sim.world.loadBalancers.size;
    const bad = await rejectsTerminal(() =>
      lbs.ensureLoadBalancer({
        clusterName: "k",
        service: svc({ [`${P}location`]: "nbg1", [A]: "yes please" }, { ipFamilies: ["IPv6"] }),
        nodes,
      })
    );
    assert(bad.message.includes(`annotation ${A}: "yes please" is not a boolean`), bad.message);
    assertEquals(t.sim.world.loadBalancers.size, before, "nothing created");
    // The operator's default turns it on for every Service; a Service's annotation still decides.
    const { lbs: lbsOn, nodes: nodesOn, t: t2 } = await setup({
      HCLOUD_LOAD_BALANCERS_INGRESS_FOLLOWS_IP_FAMILIES: "true",
    });
    try {
      const on = await lbsOn.ensureLoadBalancer({
        clusterName: "k",
        service: svc({ [`${P}location`]: "nbg1" }, { ipFamilies: ["IPv6"] }),
        nodes: nodesOn,
      });
      assertEquals(ips(on).map(family), ["IPv6"]);
      const off = await lbsOn.ensureLoadBalancer({
        clusterName: "k",
        service: svc({ [`${P}location`]: "nbg1", [A]: "false" }, { ipFamilies: ["IPv6"] }),
        nodes: nodesOn,
      });
      assertEquals(ips(off).map(family), ["IPv4", "IPv6", "IPv4"]);
    } finally {
      await t2.finish();
    }
  } finally {
    await t.finish();
  }
});
