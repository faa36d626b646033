/**
 * The service controller against a real kube-apiserver and the simulator.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import type { LoadBalancer } from "../hcloud_sim/world.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { LB_FINALIZER } from "../controllers/mod.ts";
import { lbService } from "../testing/services.ts";

const P = "load-balancer.hetzner.cloud/";
const SEED = {
  networks: [{
    name: "k8s",
    ip_range: "10.0.0.0/8",
    subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
  }],
};

const service = lbService;

Deno.test({
  name: "service controller against a real apiserver and the simulator",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { cluster, s, sim, client, close } = await testEnvironment();
    applySeed(sim, SEED);
    const lbOf = async (name: string): Promise<LoadBalancer | undefined> => {
      const uid = (await client.get(SERVICES, name, { namespace: "default" })).metadata!.uid!;
      return [...sim.world.loadBalancers.values()].find((lb) => lb.labels["hcloud-ccm/service-uid"] === uid);
    };
    const targetsOf = (lb: LoadBalancer | undefined) => lb ? targetServerIds(sim.world, lb) : [];
    const mutations = (from: number) => sim.audit.slice(from).filter((e) => e.method !== "GET");
    const servers = [1, 2, 3].map((i) =>
      sim.addServer({ name: `w${i}`, location: "fsn1", private_net: [{ network: "k8s" }] })
    );
    for (const i of [1, 2, 3]) await registerNode(client, `w${i}`);
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node,service",
      "--load-balancer-class=hcloud.deno-ccm/lb",
      "--node-status-update-frequency=2s",
      // Without drift repair, missing balancers are found by the count check (tests/drift_repair_test.ts
      // covers the drift pass finding them).
      "--drift-repair-period=0",
    ], {
      HCLOUD_NETWORK: "k8s",
      HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
    });
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);

      await t.step(
        "create: one LB service per TCP port, one target per node, ingress and finalizer set",
        async () => {
          await client.create(
            SERVICES,
            service("web", {}, {
              ports: [
                { name: "http", port: 80, protocol: "TCP" },
                { name: "https", port: 443, protocol: "TCP" },
                { name: "dns", port: 53, protocol: "UDP" },
              ],
            }),
          );
          await eventually(
            async () =>
              ((await client.get(SERVICES, "web", { namespace: "default" })).status?.loadBalancer?.ingress ??
                []).length > 0,
            20_000,
          );
          const svc = await client.get(SERVICES, "web", { namespace: "default" });
          const lb = (await lbOf("web"))!;
          assertEquals(lb.name, `a${svc.metadata!.uid!.replace(/-/g, "")}`.slice(0, 32));
          assertEquals(lb.services.map((x) => [x.listen_port, x.destination_port, x.protocol]), [
            [80, svc.spec!.ports![0].nodePort, "tcp"],
            [443, svc.spec!.ports![1].nodePort, "tcp"],
          ]);
          assertEquals(lb.services[0].health_check.protocol, "tcp");
          assertEquals(
            targetsOf(lb),
            servers.map((x) => x.id).sort(),
          );
          assertEquals(svc.status?.loadBalancer?.ingress, [
            { ip: lb.public_net.ipv4.ip!, ipMode: "VIP" },
            { ip: lb.public_net.ipv6.ip!, ipMode: "VIP" },
            { ip: lb.private_net[0].ip!, ipMode: "VIP" },
          ]);
          assert(svc.metadata!.finalizers!.includes(LB_FINALIZER));
          // Served: the Service's condition says so (the apiserver accepts what the CCM writes).
          await eventually(async () => {
            const ready = (await client.get(SERVICES, "web", { namespace: "default" })).status?.conditions
              ?.find((c) => c.type === "LoadBalancerReady");
            return ready?.status === "True";
          });
          await eventually(async () => {
            const ev = await eventsOf(client, "web");
            return ev.some((e) => e.startsWith("Warning UnsupportedProtocolConfigured")) &&
              ev.some((e) => e.startsWith("Normal EnsuredLoadBalancer"));
          });
        },
      );

      await t.step("steady state and unrelated changes make zero mutating calls", async () => {
        const start = sim.audit.length;
        await client.patch(SERVICES, "web", "merge", {
          metadata: { annotations: { "example.com/note": "x" }, labels: { a: "b" } },
        }, { namespace: "default" });
        await new Promise((r) => setTimeout(r, 2_000));
        assertEquals(mutations(start), []);
        assert(sim.audit.slice(start).length <= 4, "an annotation change costs a few reads");
      });

      await t.step("ports added and removed; annotation change updates the LB", async () => {
        await client.patch(SERVICES, "web", "merge", {
          metadata: {
            annotations: { [`${P}algorithm-type`]: "least_connections", [`${P}health-check-interval`]: "5s" },
          },
          spec: {
            ports: [{ name: "http", port: 80, protocol: "TCP" }, {
              name: "alt",
              port: 8080,
              protocol: "TCP",
            }],
          },
        }, { namespace: "default" });
        await eventually(async () => {
          const lb = await lbOf("web");
          return JSON.stringify(lb?.services.map((x) => x.listen_port)) === "[80,8080]" &&
            lb?.algorithm.type === "least_connections" &&
            lb.services.every((x) => x.health_check.interval === 5);
        }, 20_000);
      });

      await t.step("targets follow nodes: added, excluded by label, deleted", async () => {
        const w4 = sim.addServer({ name: "w4", location: "fsn1", private_net: [{ network: "k8s" }] });
        await registerNode(client, "w4");
        await eventually(async () => targetsOf(await lbOf("web")).includes(w4.id), 20_000);
        await client.patch(NODES, "w1", "merge", {
          metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } },
        });
        await eventually(async () => !targetsOf(await lbOf("web")).includes(servers[0].id), 20_000);
        await client.delete(NODES, "w2");
        await eventually(
          async () =>
            JSON.stringify(targetsOf(await lbOf("web"))) ===
              JSON.stringify([servers[2].id, w4.id].sort((a, b) => a - b)),
          20_000,
        );
        // The label-selector balancer followed the server labels: nothing was updated on it, so no
        // UpdatedLoadBalancer event claims otherwise.
        assert(!(await eventsOf(client, "web")).some((e) => e.startsWith("Normal UpdatedLoadBalancer")));
      });

      await t.step(
        "externalTrafficPolicy Local: health check on healthCheckNodePort over HTTP /healthz",
        async () => {
          await client.create(SERVICES, service("local", {}, { externalTrafficPolicy: "Local" }));
          await eventually(
            async () => (await lbOf("local")) !== undefined && (await lbOf("local"))!.services.length === 1,
            20_000,
          );
          const svc = await client.get(SERVICES, "local", { namespace: "default" });
          const hc = (await lbOf("local"))!.services[0].health_check;
          assertEquals([hc.protocol, hc.port, hc.http?.path], [
            "http",
            svc.spec!.healthCheckNodePort,
            "/healthz",
          ]);
        },
      );

      await t.step(
        "every invalid annotation: a Warning naming it and its value, nothing changed in the cloud",
        async () => {
          const invalid: [string, string][] = [
            ["algorithm-type", "random"],
            ["uses-proxyprotocol", "yes"],
            ["health-check-interval", "soon"],
            ["health-check-retries", "99"],
            ["private-ipv4", "1.2.3"],
            ["private-subnet-ip-range", "10.0.0.0"],
            ["protocol", "udp"],
            ["node-selector", "a b"],
            ["location", "mars1"],
            ["type", "lb99"],
            ["http-cookie-lifetime", "forever"],
            ["certificate-type", "stolen"],
          ];
          const start = sim.audit.length;
          for (const [i, [name, value]] of invalid.entries()) {
            await client.create(SERVICES, service(`bad-${i}`, { [`${P}${name}`]: value }));
          }
          for (const [i, [name, value]] of invalid.entries()) {
            await eventually(
              async () =>
                (await eventsOf(client, `bad-${i}`)).some((e) =>
                  e.startsWith("Warning SyncLoadBalancerFailed") && e.includes(`${P}${name}: "${value}"`)
                ),
              20_000,
            );
          }
          assertEquals(mutations(start), []);
          // The Service's own status says so too, as the apiserver accepted it.
          for (const [i, [name, value]] of invalid.entries()) {
            await eventually(async () => {
              const svc = await client.get(SERVICES, `bad-${i}`, { namespace: "default" });
              const ready = svc.status?.conditions?.find((c) => c.type === "LoadBalancerReady");
              return ready?.status === "False" && ready.reason === "Refused" &&
                ready.message.includes(`${P}${name}: "${value}"`);
            });
          }
          // Fixing the annotation is picked up: the Service change triggers a new sync.
          await client.patch(SERVICES, "bad-0", "merge", {
            metadata: { annotations: { [`${P}algorithm-type`]: "round_robin" } },
          }, { namespace: "default" });
          await eventually(async () => (await lbOf("bad-0"))?.algorithm.type === "round_robin", 20_000);
        },
      );

      await t.step("a hand-made balancer is taken over by name only with adopt-existing", async () => {
        const existing = await s.api("POST", "/load_balancers", {
          name: "adopt-me",
          load_balancer_type: "lb11",
          location: "fsn1",
          labels: { team: "web" },
        });
        const before = sim.world.loadBalancers.size;
        await client.create(SERVICES, service("adopted", { [`${P}name`]: "adopt-me" }));
        await eventually(
          async () =>
            (await eventsOf(client, "adopted")).some((e) =>
              e.startsWith("Warning SyncLoadBalancerFailed") && e.includes('"adopt-me"') &&
              e.includes("adopt-existing")
            ),
          20_000,
        );
        const untouched = sim.world.loadBalancers.get(existing.body.load_balancer.id)!;
        assertEquals(untouched.labels, { team: "web" }, "refused: nothing changed");
        await client.patch(SERVICES, "adopted", "merge", {
          metadata: { annotations: { [`${P}adopt-existing`]: "true" } },
        }, { namespace: "default" });
        await eventually(async () => (await lbOf("adopted"))?.id === existing.body.load_balancer.id, 20_000);
        assertEquals(sim.world.loadBalancers.size, before);
      });

      await t.step("a balancer deleted outside the CCM is recreated and the ingress follows", async () => {
        const lost = (await lbOf("web"))!;
        sim.control.vanishLoadBalancer(lost.id);
        await eventually(async () => {
          const lb = await lbOf("web");
          return lb !== undefined && lb.id !== lost.id;
        }, 20_000);
        const fresh = (await lbOf("web"))!;
        await eventually(async () => {
          const svc = await client.get(SERVICES, "web", { namespace: "default" });
          return svc.status?.loadBalancer?.ingress?.[0]?.ip === fresh.public_net.ipv4.ip;
        }, 20_000);
        assert(
          (await eventsOf(client, "web")).some((e) => e.startsWith("Warning LoadBalancerMissing")),
          "the Service says so",
        );
      });

      await t.step("loadBalancerClass: a foreign class is ignored, ours is served", async () => {
        await client.create(SERVICES, service("foreign", {}, { loadBalancerClass: "example.com/other" }));
        await client.create(SERVICES, service("ours", {}, { loadBalancerClass: "hcloud.deno-ccm/lb" }));
        await eventually(async () => (await lbOf("ours")) !== undefined, 20_000);
        assertEquals(await lbOf("foreign"), undefined);
        assertEquals(
          (await client.get(SERVICES, "foreign", { namespace: "default" })).metadata?.finalizers,
          undefined,
        );
      });

      await t.step(
        "cleanup: deleted Service, type changed to ClusterIP, protected load balancer kept",
        async () => {
          const webLb = (await lbOf("web"))!.id;
          await client.delete(SERVICES, "web", { namespace: "default" });
          await eventually(
            async () =>
              !(await client.list(SERVICES, { namespace: "default" })).items.some((x) =>
                x.metadata?.name === "web"
              ),
            20_000,
          );
          assert(!sim.world.loadBalancers.has(webLb), "the load balancer is deleted with its Service");

          const localLb = (await lbOf("local"))!.id;
          await client.patch(SERVICES, "local", "merge", {
            spec: { type: "ClusterIP", externalTrafficPolicy: null },
          }, { namespace: "default" });
          await eventually(async () => {
            const svc = await client.get(SERVICES, "local", { namespace: "default" });
            return !svc.metadata?.finalizers?.includes(LB_FINALIZER) &&
              !svc.status?.loadBalancer?.ingress?.length;
          }, 20_000);
          assert(!sim.world.loadBalancers.has(localLb));

          await client.create(SERVICES, service("keep", { [`${P}protection-delete`]: "true" }));
          await eventually(async () => (await lbOf("keep"))?.protection.delete === true, 20_000);
          const kept = (await lbOf("keep"))!.id;
          await client.delete(SERVICES, "keep", { namespace: "default" });
          await eventually(
            async () =>
              !(await client.list(SERVICES, { namespace: "default" })).items.some((x) =>
                x.metadata?.name === "keep"
              ),
            20_000,
          );
          assert(sim.world.loadBalancers.has(kept), "a protected load balancer stays in the cloud");
        },
      );
    } finally {
      await close(ccm);
    }
  },
});
