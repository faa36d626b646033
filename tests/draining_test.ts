/**
 * Graceful draining against a real kube-apiserver and the simulator: a Node the autoscaler marks for
 * removal stays a target of a draining balancer until its health check (kube-proxy's `/healthz`,
 * opted in) has had time to fail it, then goes with one write; so does a Node that leaves a
 * balancer's node selector, and one marked while no CCM ran (after the restart); a balancer that
 * does not drain drops it at once, as the official CCM does; nothing is called while no Node leaves.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { KUBE_PROXY_HEALTH_CHECK_ANNOTATION, PREFIX } from "../providers/hcloud/mod.ts";

function service(name: string, annotations: Record<string, string>): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", annotations: { [`${PREFIX}location`]: "fsn1", ...annotations } },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: [{ name: "http", port: 80, protocol: "TCP" }],
    },
  };
}

Deno.test({
  name: "draining: a leaving Node stays a target until the health check has failed it, then goes",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const sim = s.sim;
    const servers = [1, 2, 3].map((i) => sim.addServer({ name: `w${i}`, location: "fsn1" }));
    for (const i of [1, 2, 3]) await registerNode(client, `w${i}`);
    // The quickest check Hetzner allows, cluster-wide: 3 s interval, 1 s timeout, 1 retry: a 12 s period.
    const env = {
      HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS: "true",
      HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL: "3s",
      HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT: "1s",
      HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: "1",
    };
    let ccm = await startCcm(
      cluster,
      sim,
      ["--controllers=cloud-node,service", "--drift-repair-period=0"],
      env,
    );
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      await client.create(SERVICES, service("proxied", { [KUBE_PROXY_HEALTH_CHECK_ANNOTATION]: "true" }), {
        namespace: "default",
      });
      await client.create(SERVICES, service("plain", {}), { namespace: "default" });
      const lbOf = (name: string) =>
        [...sim.world.loadBalancers.values()].find((lb) => lb.labels["deno-ccm/service-name"] === name);
      const targets = (name: string) => {
        const lb = lbOf(name);
        return lb ? targetServerIds(sim.world, lb).sort() : [];
      };
      const all = servers.map((srv) => srv.id).sort();
      await eventually(() => targets("proxied").length === 3 && targets("plain").length === 3, 30_000);
      const check = lbOf("proxied")!.services[0].health_check;
      assertEquals([check.protocol, check.port, check.http?.path, check.interval], [
        "http",
        10256,
        "/healthz",
        3,
      ]);
      assertEquals(
        lbOf("plain")!.services[0].health_check.protocol,
        "tcp",
        "the official CCM's check by default",
      );

      // Quiet: no Node leaving, no write over a while.
      const quiet = sim.audit.length;
      await new Promise((r) => setTimeout(r, 3_000));
      assertEquals(
        sim.audit.slice(quiet).filter((e) => e.method !== "GET"),
        [],
        "no write while nothing changes",
      );

      // The autoscaler marks w3 (kube-proxy's /healthz fails there now): it stays a target of both
      // balancers while their checks fail it, then goes.
      const marked = sim.audit.length;
      await client.patch(NODES, "w3", "merge", {
        spec: { taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule", value: "1" }] },
      });
      await new Promise((r) => setTimeout(r, 3_000));
      assertEquals([targets("proxied"), targets("plain")], [all, all], "kept 3 s later (the period is 12 s)");
      await eventually(() => targets("proxied").length === 2 && targets("plain").length === 2, 30_000);
      assertEquals(targets("proxied"), all.filter((id) => id !== servers[2].id));
      // The balancers follow the cluster's target label: one write for the Node, draining or not.
      const writes = sim.audit.slice(marked).filter((e) => e.method !== "GET").map((e) => e.route);
      assertEquals(writes, ["PUT /servers/{id}"]);

      // A node selector: w2 leaves the pool (a label) and drains from that balancer only.
      for (const name of ["w1", "w2"]) {
        await client.patch(NODES, name, "merge", { metadata: { labels: { pool: "web" } } });
      }
      await client.create(SERVICES, service("pooled", { [`${PREFIX}node-selector`]: "pool=web" }), {
        namespace: "default",
      });
      const pool = [servers[0].id, servers[1].id].sort();
      await eventually(() => targets("pooled").length === 2, 30_000);
      const relabelled = sim.audit.length;
      await client.patch(NODES, "w2", "merge", { metadata: { labels: { pool: "db" } } });
      await new Promise((r) => setTimeout(r, 3_000));
      assertEquals(targets("pooled"), pool, "w2 still a target 3 s later");
      await eventually(() => targets("pooled").length === 1, 30_000);
      assertEquals(targets("pooled"), [servers[0].id]);
      assertEquals(targets("proxied"), pool, "the other balancers keep w2");
      assertEquals(
        sim.audit.slice(relabelled).filter((e) => e.method !== "GET").map((e) => e.route),
        ["POST /load_balancers/{id}/actions/remove_target"],
        "one write, when the period is over",
      );

      // A restart while a Node drains: the autoscaler marks w1 while no CCM runs; the new one
      // reads the time from the taint and keeps w1 for the rest of the period instead of dropping it.
      await ccm.stop();
      await client.patch(NODES, "w1", "merge", {
        spec: {
          taints: [{
            key: "ToBeDeletedByClusterAutoscaler",
            effect: "NoSchedule",
            value: String(Math.floor(Date.now() / 1000)),
          }],
        },
      });
      ccm = await startCcm(
        cluster,
        sim,
        ["--controllers=cloud-node,service", "--drift-repair-period=0"],
        env,
      );
      await new Promise((r) => setTimeout(r, 4_000));
      assertEquals(targets("proxied"), pool, "w1 kept 4 s after the restart");
      await eventually(() => targets("proxied").length === 1, 30_000);
      assertEquals(targets("proxied"), [servers[1].id]);
    } finally {
      await ccm.stop();
      await close();
    }
  },
});

Deno.test({
  name:
    "draining, bad input: a kube-proxy check the Nodes do not serve is a Warning and a metric, not a silent outage",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, client, close } = await testEnvironment();
    const sim = s.sim;
    // The data path checks the Nodes for real: nothing answers on their addresses (no kube-proxy).
    sim.enableDataPath({ serverAddress: (id) => `127.89.${(id >> 8) & 255}.${id & 255}`, reconcileMs: 100 });
    for (const i of [1, 2]) {
      sim.addServer({ name: `w${i}`, location: "fsn1" });
      await registerNode(client, `w${i}`);
    }
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node,service",
      "--drift-repair-period=1s",
    ]);
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      await client.create(
        SERVICES,
        service("nokp", {
          [KUBE_PROXY_HEALTH_CHECK_ANNOTATION]: "true",
          [`${PREFIX}health-check-interval`]: "3s",
          [`${PREFIX}health-check-timeout`]: "1s",
          [`${PREFIX}health-check-retries`]: "0",
        }),
        { namespace: "default" },
      );
      const warned = async () =>
        (await eventsOf(client, "nokp")).find((e) => e.startsWith("Warning LoadBalancerTargetsUnhealthy"));
      await eventually(async () => !!(await warned()), 30_000);
      assertEquals(
        await warned(),
        "Warning LoadBalancerTargetsUnhealthy: The load balancer sends no traffic: none of its 2 targets passes " +
          "the health check (http on port 10256 path /healthz); check the health-check settings (a kube-proxy " +
          "check needs kube-proxy on the Nodes)",
      );
      const gauge = ccm.registry.gauge("hcloud_load_balancer_targets", "");
      assertEquals(
        gauge.get({ load_balancer: lbName(sim), service: "default/nokp", health: "unhealthy" }),
        2,
      );
      // Per target, under the name kube-hetzner's alert reads (`sum(hcloud_load_balancer_target_healthy == 0) > 0`).
      const ids = (await client.list(NODES)).items.map((n) => n.spec!.providerID!.replace("hcloud://", ""));
      const perTarget = ccm.registry.render().split("\n")
        .filter((l) => l.startsWith("hcloud_load_balancer_target_healthy{")).sort();
      assertEquals(
        perTarget,
        ids.sort().map((id) =>
          `hcloud_load_balancer_target_healthy{load_balancer="${lbName(sim)}",target="${id}"} 0`
        ),
      );
    } finally {
      await ccm.stop();
      await close();
    }
  },
});

function lbName(sim: { world: { loadBalancers: Map<number, { name: string }> } }): string {
  return [...sim.world.loadBalancers.values()][0].name;
}
