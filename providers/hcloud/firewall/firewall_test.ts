/**
 * The firewall that follows the balancers, against the simulator: the rules open each public
 * balancer's IPv4 to the ports it sends to and nothing else, the operator's own rules stay, an
 * unchanged cluster costs no write, and applied to the Nodes' servers (by the operator) the
 * simulator lets through exactly the balancers' traffic.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals, assertRejects } from "../../../testing/assert.ts";
import { startTestSim } from "../../../testing/sim_harness.ts";
import { applySeed } from "../../../hcloud_sim/control.ts";
import { allowsInbound } from "../../../hcloud_sim/firewall_model.ts";
import { providerOnSim } from "../../../testing/provider_on_sim.ts";
import { rootCause, TerminalError } from "../../errors.ts";

const P = "load-balancer.hetzner.cloud/";
const CLUSTER = "7b0d0c3e-0000-4000-8000-00000000f1re";

function svc(name: string, nodePort: number, annotations: Record<string, string> = {}): Service {
  return {
    metadata: {
      name,
      namespace: "default",
      uid: `uid-${name}`,
      annotations: { [`${P}location`]: "nbg1", ...annotations },
    },
    spec: { type: "LoadBalancer", ports: [{ name: "p", port: 80, protocol: "TCP", nodePort }] },
  };
}

async function setup() {
  const t = await startTestSim({ actionDurationMs: 0 });
  applySeed(t.sim, {
    networks: [{
      name: "k8s",
      ip_range: "10.0.0.0/8",
      subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
    }],
  });
  const provider = await providerOnSim(t, {
    HCLOUD_NETWORK: "k8s",
    HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes",
  }, CLUSTER);
  const servers = [1, 2].map((i) =>
    t.sim.addServer({
      name: `n${i}`,
      location: "nbg1",
      labels: { role: "node" },
      private_net: [{ network: "k8s" }],
    })
  );
  const nodes: Node[] = servers.map((s, i) => ({
    metadata: { name: `n${i + 1}` },
    spec: { providerID: `hcloud://${s.id}` },
  }));
  return { t, lbs: provider.loadBalancers!, nodes, servers };
}

Deno.test("firewall: the balancers' addresses to their ports, the operator's rules kept, no write when in step", async () => {
  const { t, lbs, nodes, servers } = await setup();
  try {
    // The operator's firewall, with SSH from the office, applied to the Nodes by label.
    const made = await t.api("POST", "/firewalls", {
      name: "k8s-nodes",
      rules: [{
        direction: "in",
        protocol: "tcp",
        port: "22",
        source_ips: ["192.0.2.0/24"],
        description: "ssh",
      }],
      apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    });
    assertEquals(made.status, 201);
    const web = svc("web", 30080);
    const api = svc("api", 30443);
    const inside = svc("inside", 30999, { [`${P}use-private-ip`]: "true" });
    for (const s of [web, api, inside]) await lbs.ensureLoadBalancer({ clusterName: "k", service: s, nodes });
    await lbs.nodeTargets!.sync!("k", nodes);
    const ipOf = (name: string) =>
      [...t.sim.world.loadBalancers.values()].find((lb) =>
        lb.labels["hcloud-ccm/service-uid"] === `uid-${name}`
      )!
        .public_net.ipv4.ip!;

    assertEquals(await lbs.firewall!.sync(), { changed: true, rules: 2, refused: [] });
    const fw = (await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0];
    assertEquals(fw.rules[0].description, "ssh", "the operator's rule first, as it was");
    const ours = fw.rules.slice(1);
    assertEquals(ours.map((r: { port: string }) => r.port), ["30080", "30443"]);
    assertEquals(ours[0].source_ips, [`${ipOf("api")}/32`, `${ipOf("web")}/32`].sort());
    // The balancer that reaches its targets through the Network needs no opening.
    assert(!JSON.stringify(ours).includes(ipOf("inside")));

    // What gets through to a Node's public interface now.
    const to = (source: string, port: number) =>
      allowsInbound(t.sim.world, servers[0].id, { protocol: "tcp", source, port });
    assertEquals(to(ipOf("web"), 30080), true);
    assertEquals(to(ipOf("web"), 30443), true, "a balancer of this cluster, on another balancer's port");
    assertEquals(to("198.51.100.77", 30080), false, "the world no longer reaches the NodePort");
    assertEquals(to(ipOf("web"), 22), false, "a balancer reaches no other port");
    assertEquals(to("192.0.2.5", 22), true, "the operator's SSH rule still works");

    // In step: a read and a list, no write.
    const before = t.sim.audit.length;
    assertEquals(await lbs.firewall!.sync(), { changed: false, rules: 2, refused: [] });
    assertEquals(t.sim.audit.slice(before).filter((e) => e.method !== "GET").length, 0);

    // A Service gone takes its port with it; a rule removed in the console comes back.
    await lbs.ensureLoadBalancerDeleted("k", api);
    assertEquals((await lbs.firewall!.sync()).changed, true);
    const after = (await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0];
    assertEquals(after.rules.map((r: { port: string }) => r.port), ["22", "30080"]);
    await t.api("POST", `/firewalls/${after.id}/actions/set_rules`, { rules: [after.rules[0]] });
    // The periodic recheck, no Service changed since: one read of the firewall, and the repair.
    const recheck = t.sim.audit.length;
    assertEquals((await lbs.firewall!.sync(undefined, { balancersUnchanged: true })).changed, true);
    assertEquals(t.sim.audit.slice(recheck).map((e) => e.route), [
      "GET /firewalls",
      "POST /firewalls/{id}/actions/set_rules",
    ]);
    assertEquals((await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0].rules.length, 2);
  } finally {
    await t.finish();
  }
});

Deno.test("firewall: created when missing (applied to nothing); another cluster's is refused", async () => {
  const { t, lbs, nodes } = await setup();
  try {
    await lbs.ensureLoadBalancer({ clusterName: "k", service: svc("web", 30080), nodes });
    const created = await lbs.firewall!.sync();
    assertEquals(created.changed, true);
    assert(/is applied to no server: its rules protect nothing/.test(created.notice ?? ""), created.notice);
    const fw = (await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0];
    assertEquals(fw.labels["deno-ccm/cluster-id"], CLUSTER);
    assertEquals(fw.applied_to, [], "the CCM never applies a firewall: it is never a server's first");
    await t.api("PUT", `/firewalls/${fw.id}`, { labels: { "deno-ccm/cluster-id": "another-cluster" } });
    const err = await assertRejects(() => lbs.firewall!.sync(), Error);
    assert(rootCause(err) instanceof TerminalError, err.message);
    assert(/labelled for another cluster/.test(err.message), err.message);
  } finally {
    await t.finish();
  }
});

Deno.test("firewall: a tenant's Service opens its ports to the balancers only, never to sources it names", async () => {
  const { t, lbs, nodes, servers } = await setup();
  try {
    await t.api("POST", "/firewalls", {
      name: "k8s-nodes",
      apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    });
    // A tenant aims its health check at SSH and asks for source ranges of its choosing.
    const hostile = svc("hostile", 30081, { [`${P}health-check-port`]: "22" });
    hostile.spec!.loadBalancerSourceRanges = ["0.0.0.0/0"];
    await lbs.ensureLoadBalancer({ clusterName: "k", service: hostile, nodes });
    await lbs.firewall!.sync();
    const fw = (await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0];
    const sources = fw.rules.flatMap((r: { source_ips: string[] }) => r.source_ips);
    const lbIp = [...t.sim.world.loadBalancers.values()][0].public_net.ipv4.ip!;
    assertEquals([...new Set(sources)], [`${lbIp}/32`], "only the balancer's address, never 0.0.0.0/0");
    const to = (source: string, port: number) =>
      allowsInbound(t.sim.world, servers[0].id, { protocol: "tcp", source, port });
    assertEquals([to(lbIp, 22), to("198.51.100.77", 22), to("198.51.100.77", 30081)], [true, false, false]);
  } finally {
    await t.finish();
  }
});

function nodePortService(
  name: string,
  namespace: string,
  ports: [number, "TCP" | "UDP"][],
  ranges?: string[],
  at = "2026-11-27T10:00:00Z",
): Service {
  return {
    metadata: {
      name,
      namespace,
      uid: `uid-${name}`,
      creationTimestamp: at,
      annotations: {
        "service.deno-ccm.io/firewall-open-nodeports": "true",
        ...ranges ? { "service.deno-ccm.io/firewall-source-ranges": ranges.join(",") } : {},
      },
    },
    spec: {
      type: "NodePort",
      ports: ports.map(([nodePort, protocol], i) => ({ name: `p${i}`, port: 80 + i, protocol, nodePort })),
    },
  };
}

Deno.test("firewall: NodePort Services the operator allows open their NodePorts from their ranges; others are refused", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  const services: Service[] = [];
  const provider = await providerOnSim(t, {
    HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes",
    HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "shop",
  }, { clusterId: CLUSTER, services: () => services });
  try {
    const server = t.sim.addServer({ name: "n1", location: "nbg1", labels: { role: "node" } });
    const to = (source: string, port: number, protocol: "tcp" | "udp" = "tcp") =>
      allowsInbound(t.sim.world, server.id, { protocol, source, port });
    const admin = nodePortService("admin", "shop", [[31000, "TCP"]], ["203.0.113.0/24"]);
    const open = nodePortService("open", "shop", [[31001, "TCP"], [31002, "UDP"]]);
    const intruder = nodePortService("intruder", "other", [[31003, "TCP"]]);
    services.push(admin, open, intruder);
    const table = () => [
      to("203.0.113.9", 31000),
      to("198.51.100.77", 31000),
      to("198.51.100.77", 31001),
      to("198.51.100.77", 31002, "udp"),
      to("198.51.100.77", 31003),
      to("198.51.100.77", 22),
    ];
    assertEquals(table(), [true, true, true, true, true, true], "before any firewall: everything is open");
    await t.api("POST", "/firewalls", {
      name: "k8s-nodes",
      rules: [{
        direction: "in",
        protocol: "tcp",
        port: "22",
        source_ips: ["0.0.0.0/0"],
        description: "ssh",
      }],
      apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    });
    const lbs = provider.loadBalancers!;
    assertEquals(lbs.firewall!.concerns!(intruder), true, "a Service asking is followed, allowed or not");
    const result = await lbs.firewall!.sync();
    assertEquals([result.changed, result.rules], [true, 3]);
    assertEquals(result.refused?.map((r) => r.service), ["other/intruder"]);
    assert(/namespace other may not/.test(result.refused![0].message), result.refused![0].message);
    assertEquals(
      table(),
      [true, false, true, true, false, true],
      "each from its ranges; the intruder's stays shut",
    );
    assert(to("2001:db8::1", 31001), "no ranges: IPv6 clients too");

    // Only NodePort Services changed: no list of the balancers, one read and one write.
    services.splice(services.indexOf(admin), 1, { ...admin, spec: { ...admin.spec, type: "ClusterIP" } });
    const before = t.sim.audit.length;
    assertEquals((await lbs.firewall!.sync(undefined, { balancersUnchanged: true })).changed, true);
    assertEquals(t.sim.audit.slice(before).map((e) => e.route), [
      "GET /firewalls",
      "POST /firewalls/{id}/actions/set_rules",
    ]);
    assertEquals(to("203.0.113.9", 31000), false, "a Service that changed type takes its rule with it");
    const fw = (await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0];
    assertEquals(fw.rules[0].description, "ssh", "the operator's rule stays first");
    assertEquals(
      fw.rules.slice(1).map((r: { description: string; port: string }) => `${r.description}: ${r.port}`),
      [`deno-ccm ${CLUSTER}: NodePort shop/open: 31001`, `deno-ccm ${CLUSTER}: NodePort shop/open: 31002`],
    );
  } finally {
    await t.finish();
  }
});

Deno.test("firewall: a full firewall refuses the newest NodePort Service whole; older ones and the balancers keep their rules", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  const services: Service[] = [];
  const provider = await providerOnSim(t, {
    HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes",
    HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "*",
  }, { clusterId: CLUSTER, services: () => services });
  try {
    // The operator's rules leave room for 3: the older Service's 2 fit, the newer's 2 do not.
    const rules = Array.from({ length: 47 }, (_, i) => ({
      direction: "in",
      protocol: "tcp",
      port: String(1000 + i),
      source_ips: ["192.0.2.0/24"],
      description: `operator ${i}`,
    }));
    await t.api("POST", "/firewalls", { name: "k8s-nodes", rules });
    services.push(
      nodePortService("newer", "b", [[31010, "TCP"], [31012, "TCP"]], undefined, "2026-11-27T11:00:00Z"),
      nodePortService("older", "a", [[31020, "TCP"], [31022, "TCP"]], undefined, "2026-11-27T09:00:00Z"),
    );
    const result = await provider.loadBalancers!.firewall!.sync();
    assertEquals([result.changed, result.rules], [true, 2]);
    assertEquals(result.refused?.map((r) => r.service), ["b/newer"]);
    assert(
      /do not fit in firewall k8s-nodes \(1 rules and/.test(result.refused![0].message),
      result.refused![0].message,
    );
    const fw = (await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0];
    assertEquals(fw.rules.length, 49);
    assertEquals(
      fw.rules.slice(0, 47).map((r: { description: string }) => r.description),
      rules.map((r) => r.description),
    );
  } finally {
    await t.finish();
  }
});

Deno.test("firewall: a balancer made outside Kubernetes is opened for the ports the cluster's Services own on it, no others", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  const services: Service[] = [];
  const provider = await providerOnSim(t, { HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes" }, {
    clusterId: CLUSTER,
    services: () => services,
  });
  try {
    const server = t.sim.addServer({ name: "n1", location: "nbg1" });
    const nodes: Node[] = [{ metadata: { name: "n1" }, spec: { providerID: `hcloud://${server.id}` } }];
    // Terraform's balancer, serving a port of its own on a VM.
    const made = await t.api("POST", "/load_balancers", {
      name: "shared",
      load_balancer_type: "lb11",
      location: "nbg1",
      services: [{
        protocol: "tcp",
        listen_port: 22,
        destination_port: 2222,
        proxyprotocol: false,
        health_check: { protocol: "tcp", port: 2222, interval: 15, timeout: 10, retries: 3 },
      }],
    });
    assertEquals(made.status, 201);
    const attached: Service = {
      metadata: {
        name: "attached",
        namespace: "default",
        uid: "uid-attached",
        annotations: { [`${P}attach-to`]: "shared" },
      },
      spec: { type: "LoadBalancer", ports: [{ name: "p", port: 80, protocol: "TCP", nodePort: 30555 }] },
    };
    const result = await provider.loadBalancers!.ensureLoadBalancer({
      clusterName: "k",
      service: attached,
      nodes,
    });
    // The Service as the controller leaves it: with the record the provider asked to write.
    services.push({
      ...attached,
      metadata: {
        ...attached.metadata,
        annotations: { ...attached.metadata!.annotations, ...result.annotations as Record<string, string> },
      },
    });
    const synced = await provider.loadBalancers!.firewall!.sync();
    assertEquals(synced.changed, true);
    const fw = (await t.api("GET", "/firewalls?name=k8s-nodes")).body.firewalls[0];
    const ip = made.body.load_balancer.public_net.ipv4.ip;
    assertEquals(
      fw.rules.map((r: { port: string; source_ips: string[] }) => `${r.port} ${r.source_ips}`),
      [`30555 ${ip}/32`],
      "the Service's NodePort; Terraform's own port stays Terraform's business",
    );
    // A forged record (another balancer, unsealed) opens nothing.
    services[0] = {
      ...services[0],
      metadata: {
        ...services[0].metadata,
        annotations: {
          "service.deno-ccm.io/co-managed": JSON.stringify({ id: 999, ports: [22], target: false }),
        },
      },
    };
    assertEquals((await provider.loadBalancers!.firewall!.sync()).rules, 0);
  } finally {
    await t.finish();
  }
});

Deno.test("firewall: a console edit is put back on a sign in what is read anyway, never by a periodic read", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    // 120 servers: the cache follows the action logs (over two pages), as in any large project.
    const servers = Array.from(
      { length: 120 },
      (_, i) => t.sim.addServer({ name: `n${i}`, location: "nbg1", labels: { role: "node" } }),
    );
    const provider = await providerOnSim(t, { HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes" }, CLUSTER);
    const lbs = provider.loadBalancers!;
    const nodes: Node[] = servers.slice(0, 3).map((s) => ({
      metadata: { name: s.name },
      spec: { providerID: `hcloud://${s.id}` },
    }));
    let pokes = 0;
    lbs.firewall!.watch!(() => pokes++);
    const fw = (await t.api("POST", "/firewalls", {
      name: "k8s-nodes",
      apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
    })).body.firewall;
    await lbs.ensureLoadBalancer({ clusterName: "k", service: svc("web", 30080), nodes });
    assertEquals((await lbs.firewall!.sync()).changed, true);
    await provider.cache.get({ full: true });
    const balancer = [...t.sim.world.loadBalancers.values()][0];

    // In step: the logs hold only the CCM's own write, and a healthy drift list says nothing.
    await provider.cache.get({ maxAgeMs: 0 });
    await lbs.inventory!.drift();
    const settled = pokes;
    assert(settled <= 1, `the CCM's own write may be seen once (${settled})`);
    await provider.cache.get({ maxAgeMs: 0 });
    await lbs.inventory!.drift();
    assertEquals(pokes, settled, "nothing new: no sign");

    // Terraform replaces the rules: the server action log names the firewall (no server is read).
    await t.api("POST", `/firewalls/${fw.id}/actions/set_rules`, { rules: [] });
    const before = t.sim.audit.length;
    await provider.cache.get({ maxAgeMs: 0 });
    assertEquals(pokes, settled + 1, "the log named the firewall");
    assert(t.sim.audit.slice(before).every((e) => e.route.endsWith("/actions")));
    // The poke asks for a sync that knows the balancers unchanged: one read, one write.
    const repair = t.sim.audit.length;
    assertEquals((await lbs.firewall!.sync(undefined, { balancersUnchanged: true })).changed, true);
    assertEquals(t.sim.audit.slice(repair).map((e) => e.route), [
      "GET /firewalls",
      "POST /firewalls/{id}/actions/set_rules",
    ]);

    // A failing health check seen in the drift list is a sign too (any project size).
    t.sim.control.setTargetHealth(balancer.id, servers[0].id, "unhealthy");
    const unhealthy = pokes;
    await lbs.inventory!.drift();
    assertEquals(pokes, unhealthy + 1, "a target failing its check");
  } finally {
    await t.finish();
  }
});
