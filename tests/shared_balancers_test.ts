/**
 * Shared balancers against a real apiserver and the simulator: Services of one namespace naming the
 * same `service.deno-ccm.io/load-balancer-share` key serve on one balancer, made by the first and
 * deleted with the last (in every order); a Service that would break the sharing is refused and
 * changes nothing; a CCM stopped between the two writes of a join or of a leave converges; a key
 * change, the key removed and drift are repaired; another namespace never joins.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, type RunningCcm, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NAMESPACES, NODES, SERVICES } from "../kube/resources.ts";

const P = "load-balancer.hetzner.cloud/";
const SHARE = "service.deno-ccm.io/load-balancer-share";

function service(
  name: string,
  key: string | undefined,
  ports: number[],
  annotations: Record<string, string> = {},
  namespace = "default",
): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, annotations: { ...key ? { [SHARE]: key } : {}, ...annotations } },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: ports.map((port) => ({ name: `p${port}`, port, protocol: "TCP" as const })),
    },
  };
}

const ARGS = [
  "--controllers=cloud-node,service",
  "--node-status-update-frequency=2s",
  "--drift-repair-period=2s",
];
const ENV = { HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1" };

Deno.test({
  name: "shared balancers: one balancer for the Services of a key, ports owned, refusals change nothing",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { cluster, s, sim, client, close } = await testEnvironment();
    for (const i of [1, 2]) {
      sim.addServer({ name: `s${i}`, location: "fsn1" });
      await registerNode(client, `s${i}`);
    }
    let ccm: RunningCcm = await startCcm(cluster, sim, ARGS, ENV);
    const balancers = (key: string, namespace = "default") =>
      [...sim.world.loadBalancers.values()].filter((lb) =>
        lb.labels["deno-ccm/share"] === key && lb.labels["deno-ccm/service-namespace"] === namespace
      );
    const ports = (key: string) =>
      (balancers(key)[0]?.services ?? []).map((x) => x.listen_port).sort((a, b) => a - b);
    const owners = (key: string) =>
      Object.entries(balancers(key)[0]?.labels ?? {}).filter(([k]) => k.startsWith("deno-ccm/port-"))
        .map(([k, v]) => `${k.slice("deno-ccm/port-".length)}=${v}`).sort();
    const get = (name: string, namespace = "default") => client.get(SERVICES, name, { namespace });
    const ingress = async (name: string, namespace = "default") =>
      (await get(name, namespace)).status?.loadBalancer?.ingress?.[0]?.ip;
    const writes = (from: number) =>
      sim.audit.slice(from).filter((e) => e.method !== "GET").map((e) => e.route);
    // A merge patch: no conflict with the CCM's own writes to the Service.
    const setKey = (name: string, key: string | null) =>
      client.patch(SERVICES, name, "merge", { metadata: { annotations: { [SHARE]: key } } }, {
        namespace: "default",
      });
    const failed = async (name: string, text: string) =>
      (await eventsOf(client, name)).some((e) =>
        e.startsWith("Warning SyncLoadBalancerFailed") && e.includes(text)
      );
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);

      await t.step("three Services of one key share one balancer, each with its ports", async () => {
        await client.create(SERVICES, service("a", "web", [80]));
        await eventually(async () => (await ingress("a")) !== undefined, 20_000);
        // Its own per-port setting: 8443 speaks HTTP, the other ports on the balancer stay TCP.
        await client.create(
          SERVICES,
          service("b", "web", [443, 8443], { "service.deno-ccm.io/port-8443-protocol": "http" }),
        );
        await eventually(() => ports("web").length === 3, 20_000);
        await eventually(async () => (await ingress("b")) !== undefined, 20_000);
        const from = sim.audit.length;
        await client.create(SERVICES, service("c", "web", [8080]));
        await eventually(() => ports("web").length === 4, 20_000);
        await eventually(async () => (await ingress("c")) !== undefined, 20_000);
        const calls = sim.audit.slice(from).map((e) => e.route);
        console.log(`a Service joins: ${JSON.stringify(calls)}`);
        assertEquals(writes(from), [
          "PUT /load_balancers/{id}",
          "POST /load_balancers/{id}/actions/add_service",
        ]);
        assertEquals(balancers("web").length, 1, "one balancer");
        const lb = balancers("web")[0];
        for (const name of ["a", "b", "c"]) {
          await eventually(async () => (await ingress(name)) === lb.public_net.ipv4.ip, 20_000);
        }
        assertEquals(owners("web"), ["443=b", "8080=c", "80=a", "8443=b"]);
        assert(/^default-web-[0-9a-f]{10}$/.test(lb.name), `the default name: ${lb.name}`);
        assertEquals(
          lb.services.map((x) => `${x.listen_port}/${x.protocol}`).sort(),
          ["443/tcp", "80/tcp", "8080/tcp", "8443/http"],
        );
        assertEquals(lb.targets.filter((x) => x.type === "label_selector").length, 1, "the cluster's target");
        const svcB = await get("b");
        assertEquals(
          lb.services.find((x) => x.listen_port === 443)?.destination_port,
          svcB.spec!.ports!.find((p) => p.port === 443)!.nodePort,
        );
      });

      await t.step("Services that would break the sharing are refused and change nothing", async () => {
        const before = JSON.stringify(balancers("web"));
        await client.create(SERVICES, service("taken", "web", [9000, 80]));
        await client.create(SERVICES, service("bigger", "web", [9001], { [`${P}type`]: "lb21" }));
        await client.create(SERVICES, service("picky", "web", [9002], { [`${P}node-selector`]: "a=b" }));
        await client.create(SERVICES, service("full", "web", [9003, 9004]));
        await eventually(() => failed("taken", "port 80 is served by Service default/a"), 20_000);
        await eventually(
          () => failed("bigger", "type=lb21) differ from those of Services default/a, default/b, default/c"),
          20_000,
        );
        await eventually(() => failed("picky", `${P}node-selector cannot be set with it`), 20_000);
        await eventually(() => failed("full", "6 ports to serve on the shared balancer"), 20_000);
        assertEquals(JSON.stringify(balancers("web")), before, "the shared balancer is unchanged");
        assertEquals(await ingress("taken"), undefined);
        for (const name of ["taken", "bigger", "picky", "full"]) {
          await client.delete(SERVICES, name, { namespace: "default" });
        }
        await eventually(async () =>
          (await client.list(SERVICES, { namespace: "default" })).items.length === 4
        );
        assertEquals(JSON.stringify(balancers("web")), before, "their deletion leaves it alone too");
      });

      await t.step("another namespace with the same key gets its own balancer", async () => {
        await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } });
        await client.create(SERVICES, service("a", "web", [80], {}, "other"));
        await eventually(async () => (await ingress("a", "other")) !== undefined, 20_000);
        assertEquals(balancers("web", "other").length, 1);
        assert(balancers("web", "other")[0].id !== balancers("web")[0].id, "not the default namespace's");
        await client.delete(SERVICES, "a", { namespace: "other" });
        await eventually(() => balancers("web", "other").length === 0, 20_000);
      });

      await t.step("drift on a member's port is repaired; a restart changes nothing", async () => {
        const lb = balancers("web")[0];
        await s.api("POST", `/load_balancers/${lb.id}/actions/delete_service`, { listen_port: 8080 });
        await eventually(() => ports("web").includes(8080), 20_000);
        await ccm.stop();
        const from = sim.audit.length;
        ccm = await startCcm(cluster, sim, ARGS, ENV);
        await new Promise((r) => setTimeout(r, 5_000)); // a full sync of every Service and two drift periods
        assertEquals(writes(from), [], "no write after a restart");
        for (const name of ["a", "b", "c"]) {
          const events = await eventsOf(client, name);
          assert(
            !events.some((e) => e.includes("LoadBalancerMissing")),
            `${name}'s balancer is not taken for missing`,
          );
          assertEquals(
            events.some((e) => e.includes("LoadBalancerDrifted")),
            name === "c",
            `drift said on ${name}`,
          );
        }
      });

      await t.step(
        "a shared balancer deleted in the console comes back with every member's ports",
        async () => {
          const gone = balancers("web")[0];
          await s.api("DELETE", `/load_balancers/${gone.id}`);
          await eventually(() => ports("web").length === 4, 20_000);
          assertEquals(balancers("web").length, 1, "one balancer again");
          assertEquals(owners("web"), ["443=b", "8080=c", "80=a", "8443=b"]);
          for (const name of ["a", "b", "c"]) {
            await eventually(
              async () => (await ingress(name)) === balancers("web")[0].public_net.ipv4.ip,
              20_000,
            );
          }
        },
      );

      await t.step("a CCM stopped between the claim and the port of a join converges", async () => {
        sim.control.setFaults({
          rules: [{ match: "add_service", status: 500, code: "server_error" }],
        });
        await client.create(SERVICES, service("d", "web", [9000]));
        await eventually(() => owners("web").includes("9000=d"), 20_000);
        assert(!ports("web").includes(9000), "the claim is written, the port is not");
        await ccm.stop();
        sim.control.clearFaults();
        ccm = await startCcm(cluster, sim, ARGS, ENV);
        await eventually(() => ports("web").includes(9000), 20_000);
        await eventually(async () => (await ingress("d")) === balancers("web")[0].public_net.ipv4.ip, 20_000);
      });

      await t.step("a CCM stopped between the port and the claim of a leave converges", async () => {
        sim.control.setFaults({
          rules: [{ match: "^PUT /load_balancers/", status: 500, code: "server_error" }],
        });
        const from = sim.audit.length;
        await client.delete(SERVICES, "d", { namespace: "default" });
        await eventually(() => !ports("web").includes(9000), 20_000);
        assert(owners("web").includes("9000=d"), "the port is gone, the claim is not");
        assertEquals(
          writes(from).filter((w) => sim.audit.slice(from).some((e) => e.route === w && e.status < 300)),
          ["POST /load_balancers/{id}/actions/delete_service"],
          "a leave removes the port, then the claim",
        );
        await ccm.stop();
        sim.control.clearFaults();
        ccm = await startCcm(cluster, sim, ARGS, ENV);
        await eventually(() => !owners("web").includes("9000=d"), 20_000);
        console.log(
          `a Service leaves (the claim, after the restart): ${
            JSON.stringify(sim.audit.slice(from).map((e) => `${e.route} ${e.status}`))
          }`,
        );
        await eventually(async () =>
          (await client.list(SERVICES, { namespace: "default" })).items.length === 4
        );
        assertEquals(ports("web"), [80, 443, 8080, 8443], "the others' ports stay");
      });

      await t.step("a Service deleted while the CCM is down leaves when it is back", async () => {
        await client.create(SERVICES, service("e", "web", [9100]));
        await eventually(() => ports("web").includes(9100), 20_000);
        await ccm.stop();
        await client.delete(SERVICES, "e", { namespace: "default" });
        assert((await get("e")).metadata?.deletionTimestamp, "held by the finalizer while the CCM is down");
        ccm = await startCcm(cluster, sim, ARGS, ENV);
        await eventually(() => !ports("web").includes(9100) && !owners("web").includes("9100=e"), 20_000);
        await eventually(async () =>
          (await client.list(SERVICES, { namespace: "default" })).items.length === 4
        );
        assertEquals(ports("web"), [80, 443, 8080, 8443]);
      });

      await t.step("a key change that cannot join keeps the Service where it was", async () => {
        await client.create(SERVICES, service("z", "api", [8080]));
        await eventually(() => ports("api").length === 1, 20_000);
        await setKey("c", "api");
        await eventually(() => failed("c", "port 8080 is served by Service default/z"), 20_000);
        assertEquals(ports("web"), [80, 443, 8080, 8443], "c still serves 8080 on its old balancer");
        assert(owners("web").includes("8080=c"));
        await client.delete(SERVICES, "z", { namespace: "default" });
        await eventually(() => ports("api").length === 0, 20_000);
        await setKey("c", "web");
      });

      await t.step("a Service that changes its key, or drops it, leaves the shared balancer", async () => {
        const from = sim.audit.length;
        await setKey("c", "api");
        await eventually(() => ports("api").length === 1 && !ports("web").includes(8080), 20_000);
        await eventually(async () => (await ingress("c")) === balancers("api")[0].public_net.ipv4.ip, 20_000);
        console.log(`key change: ${JSON.stringify(writes(from))}`);
        await setKey("b", null);
        await eventually(() => JSON.stringify(ports("web")) === "[80]", 20_000);
        await eventually(async () => {
          const ip = await ingress("b");
          return ip !== undefined && ip !== balancers("web")[0].public_net.ipv4.ip;
        }, 20_000);
        assertEquals(
          (await get("b")).metadata?.annotations?.["service.deno-ccm.io/shared-load-balancer"],
          undefined,
        );
      });

      await t.step("the last Service to go deletes the balancer", async () => {
        for (const name of ["a", "b", "c"]) await client.delete(SERVICES, name, { namespace: "default" });
        await eventually(() => sim.world.loadBalancers.size === 0, 20_000);
      });
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name: "shared balancers: three Services deleted in every order leave no port of another and no balancer",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "s1", location: "fsn1" });
    await registerNode(client, "s1");
    const ccm = await startCcm(cluster, sim, ARGS, ENV);
    const orders = [["a", "b", "c"], ["a", "c", "b"], ["b", "a", "c"], ["b", "c", "a"], ["c", "a", "b"], [
      "c",
      "b",
      "a",
    ]];
    const portOf = { a: 80, b: 443, c: 8080 } as Record<string, number>;
    const balancer = (key: string) =>
      [...sim.world.loadBalancers.values()].find((lb) => lb.labels["deno-ccm/share"] === key);
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);
      await Promise.all(orders.map(async (order, i) => {
        const key = `k${i}`;
        for (const name of ["a", "b", "c"]) {
          await client.create(SERVICES, service(`${key}-${name}`, key, [portOf[name]]));
        }
        await eventually(() => (balancer(key)?.services.length ?? 0) === 3, 30_000);
        const left = new Set(["a", "b", "c"]);
        for (const name of order) {
          await client.delete(SERVICES, `${key}-${name}`, { namespace: "default" });
          left.delete(name);
          if (left.size) {
            await eventually(
              () => !balancer(key)!.services.some((x) => x.listen_port === portOf[name]),
              30_000,
            );
            const want = [...left].map((n) => portOf[n]).sort((x, y) => x - y);
            assertEquals(balancer(key)!.services.map((x) => x.listen_port).sort((x, y) => x - y), want);
          } else {
            await eventually(() => balancer(key) === undefined, 30_000);
          }
          await eventually(
            async () =>
              !(await client.list(SERVICES, { namespace: "default" })).items.some((x) =>
                x.metadata?.name === `${key}-${name}`
              ),
            30_000,
          );
        }
      }));
      assertEquals(sim.world.loadBalancers.size, 0);
    } finally {
      await close(ccm);
    }
  },
});
