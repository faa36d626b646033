/**
 * Co-managed load balancers against a real apiserver and the simulator: Services attached with
 * `load-balancer.hetzner.cloud/attach-to` to a balancer made by Terraform add their ports and the
 * cluster's target, never change anything else, report a port someone else serves, refuse settings
 * of the whole balancer and balancers the CCM made for a Service, and take only what they added when
 * they change or go.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventsOf, eventually } from "../testing/helpers.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { CO_MANAGED_STATE } from "../providers/hcloud/mod.ts";

const P = "load-balancer.hetzner.cloud/";

function service(name: string, annotations: Record<string, string>, ports: number[]): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", annotations },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: ports.map((port) => ({ name: `p${port}`, port, protocol: "TCP" as const })),
    },
  };
}

Deno.test({
  name: "co-managed balancers: attached Services own their ports and the target, nothing else",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { cluster, s, sim, client, close } = await testEnvironment();
    for (const i of [1, 2]) {
      sim.addServer({ name: `c${i}`, location: "fsn1" });
      await registerNode(client, `c${i}`);
    }
    const vm = sim.addServer({ name: "tf-vm", location: "fsn1" });
    const shared = (await s.api("POST", "/load_balancers", {
      name: "shared",
      load_balancer_type: "lb11",
      location: "fsn1",
      labels: { "managed-by": "terraform" },
      services: [{ protocol: "tcp", listen_port: 9000, destination_port: 9000 }],
      targets: [{ type: "server", server: { id: vm.id } }],
    })).body.load_balancer;
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node,service",
      "--node-status-update-frequency=2s",
      "--drift-repair-period=2s",
    ]);
    const lb = () => sim.world.loadBalancers.get(shared.id)!;
    const ports = () => lb().services.map((x) => x.listen_port).sort((a, b) => a - b);
    const selectorTargets = () => lb().targets.filter((x) => x.type === "label_selector").length;
    const get = (name: string) => client.get(SERVICES, name, { namespace: "default" });
    const untouched = () => {
      assertEquals(lb().labels, { "managed-by": "terraform" }, "labels are Terraform's");
      assertEquals(lb().load_balancer_type.name, "lb11");
      assertEquals(lb().services.find((x) => x.listen_port === 9000)?.destination_port, 9000);
      assert(
        lb().targets.some((x) => x.type === "server" && x.server?.id === vm.id),
        "Terraform's target stays",
      );
    };
    try {
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 20_000);

      await t.step("a Service attached by name adds its port and the cluster's target", async () => {
        await client.create(SERVICES, service("a", { [`${P}attach-to`]: "shared" }, [80]));
        await eventually(
          async () => (await get("a")).status?.loadBalancer?.ingress?.[0]?.ip === shared.public_net.ipv4.ip,
          20_000,
        );
        assertEquals(ports(), [80, 9000]);
        assertEquals(selectorTargets(), 1);
        untouched();
        const { seal, ...record } = JSON.parse((await get("a")).metadata!.annotations![CO_MANAGED_STATE]);
        assertEquals(
          record,
          { id: shared.id, ports: [80], target: true },
          "what it owns is recorded on the Service",
        );
        assert(typeof seal === "string" && seal.length > 10, "sealed");
      });

      await t.step("a port someone else serves is reported, never overwritten", async () => {
        await client.create(SERVICES, service("b", { [`${P}attach-to`]: String(shared.id) }, [443, 9000]));
        await eventually(() => ports().includes(443), 20_000);
        await eventually(
          async () =>
            (await eventsOf(client, "b")).some((e) =>
              e.startsWith("Warning CoManagedPortConflict") && e.includes("port 9000")
            ),
          20_000,
        );
        untouched();
        assertEquals(selectorTargets(), 1, "one target for the cluster");
      });

      await t.step(
        "settings of the whole balancer and balancers made for a Service are refused",
        async () => {
          const before = JSON.stringify(lb());
          await client.create(
            SERVICES,
            service("c", { [`${P}attach-to`]: "shared", [`${P}type`]: "lb21" }, [81]),
          );
          await eventually(
            async () =>
              (await eventsOf(client, "c")).some((e) =>
                e.startsWith("Warning SyncLoadBalancerFailed") && e.includes(`${P}type`) &&
                e.includes("attach-to")
              ),
            20_000,
          );
          await client.create(SERVICES, service("own", { [`${P}location`]: "fsn1" }, [82]));
          await eventually(
            async () => ((await get("own")).status?.loadBalancer?.ingress ?? []).length > 0,
            20_000,
          );
          const ownName = [...sim.world.loadBalancers.values()].find((x) =>
            x.labels["hcloud-ccm/service-uid"] !== undefined
          )!.name;
          const ownBefore = JSON.stringify([...sim.world.loadBalancers.values()].find((x) =>
            x.name === ownName
          ));
          await client.create(SERVICES, service("d", { [`${P}attach-to`]: ownName }, [83]));
          await eventually(async () =>
            (await eventsOf(client, "d")).some((e) =>
              e.startsWith("Warning SyncLoadBalancerFailed") && e.includes("made outside Kubernetes")
            ), 20_000);
          assertEquals(JSON.stringify(lb()), before, "the shared balancer is unchanged");
          assertEquals(
            JSON.stringify([...sim.world.loadBalancers.values()].find((x) =>
              x.name === ownName
            )),
            ownBefore,
            "the Service's own balancer is unchanged",
          );
        },
      );

      await t.step("a changed port moves; housekeeping counts attached Services as served", async () => {
        const current = await get("a");
        await client.update(SERVICES, {
          ...current,
          spec: { ...current.spec, ports: [{ name: "p8080", port: 8080, protocol: "TCP" }] },
        });
        await eventually(() =>
          JSON.stringify(ports()) === JSON.stringify([443, 8080, 9000]), 20_000);
        await new Promise((r) =>
          setTimeout(r, 4_000)
        ); // two verify and drift periods
        for (const name of ["a", "b"]) {
          assert(
            !(await eventsOf(client, name)).some((e) => e.includes("LoadBalancerMissing")),
            `${name} is not taken for missing`,
          );
        }
        untouched();
      });

      await t.step("Services that go take exactly what they added", async () => {
        await client.delete(SERVICES, "a", { namespace: "default" });
        await eventually(() => !ports().includes(8080), 20_000);
        assertEquals(selectorTargets(), 1, "b still needs the target");
        await client.delete(SERVICES, "b", { namespace: "default" });
        await eventually(() => JSON.stringify(ports()) === JSON.stringify([9000]), 20_000);
        await eventually(() => selectorTargets() === 0, 20_000);
        untouched();
        assertEquals(lb().targets.length, 1, "only Terraform's target is left");
      });
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name: "co-managed balancers: a forged record deletes or rewrites nothing (probe N1)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "c1", location: "fsn1" });
    await registerNode(client, "c1");
    const vm = sim.addServer({ name: "tf-vm", location: "fsn1" });
    // A balancer made by Terraform, serving 443 to its own VM.
    const shared = (await s.api("POST", "/load_balancers", {
      name: "shared-tf",
      load_balancer_type: "lb11",
      location: "fsn1",
      services: [{ protocol: "tcp", listen_port: 443, destination_port: 8443 }],
      targets: [{ type: "server", server: { id: vm.id } }],
    })).body.load_balancer;
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service"], {
      HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
    });
    const get = (name: string) => client.get(SERVICES, name, { namespace: "default" });
    const served = async (name: string) => ((await get(name)).status?.loadBalancer?.ingress ?? []).length > 0;
    const balancers = () => [...sim.world.loadBalancers.values()];
    try {
      await eventually(async () => !!(await client.get(NODES, "c1")).spec?.providerID, 20_000);
      await client.create(SERVICES, service("victim", {}, [80]));
      await eventually(() => served("victim"), 20_000);
      const victimLb = balancers().find((b) => b.id !== shared.id)!;

      // Hijack: a tenant attached to the shared balancer rewrites its own record to claim 443.
      await client.create(SERVICES, service("co", { [`${P}attach-to`]: "shared-tf" }, [8080]));
      await eventually(() => served("co"), 20_000);
      const co = await get("co");
      await client.update(SERVICES, {
        ...co,
        metadata: {
          ...co.metadata,
          annotations: {
            ...co.metadata!.annotations,
            [CO_MANAGED_STATE]: JSON.stringify({ id: shared.id, ports: [443], target: true }),
          },
        },
        spec: { ...co.spec, ports: [{ name: "p443", port: 443, protocol: "TCP" }] },
      });
      await eventually(
        async () =>
          (await eventsOf(client, "co")).some((e) =>
            e.startsWith("Warning CoManagedPortConflict") && e.includes("port 443")
          ),
        20_000,
      );
      const port443 = () =>
        sim.world.loadBalancers.get(shared.id)!.services.find((x) => x.listen_port === 443);
      assertEquals(port443()?.destination_port, 8443, "the maker's port still goes to the maker's VM");

      // Deletion: a plain Service carrying a record that names the victim's balancer and port.
      await client.create(SERVICES, {
        ...service("plain", {}, [9000]),
        metadata: {
          name: "plain",
          namespace: "default",
          annotations: {
            [CO_MANAGED_STATE]: JSON.stringify({ id: victimLb.id, ports: [80], target: false }),
          },
        },
      });
      await eventually(() => served("plain"), 20_000);
      const plainLb = balancers().find((b) => b.id !== shared.id && b.id !== victimLb.id)!;
      await client.delete(SERVICES, "plain", { namespace: "default" });
      await eventually(() => !sim.world.loadBalancers.has(plainLb.id), 20_000);
      assertEquals(
        sim.world.loadBalancers.get(victimLb.id)!.services.map((x) => x.listen_port),
        [80],
        "the victim's port is still there",
      );
      await client.delete(SERVICES, "co", { namespace: "default" });
      await eventually(async () => {
        try {
          await get("co");
          return false;
        } catch {
          return true;
        }
      }, 20_000);
      assertEquals(port443()?.destination_port, 8443, "deleting the forger takes nothing of the maker's");

      // The shared balancer is deleted outside Kubernetes: at the Service's next sync its addresses,
      // which the cloud may give to another balancer, are no longer advertised (probe O4).
      await client.create(SERVICES, service("att", { [`${P}attach-to`]: "shared-tf" }, [7000]));
      await eventually(() => served("att"), 20_000);
      sim.control.vanishLoadBalancer(shared.id);
      await client.patch(SERVICES, "att", "merge", {
        metadata: { annotations: { "example.com/touched": "yes" } },
      }, {
        namespace: "default",
      });
      await eventually(async () => !(await served("att")), 20_000);
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name:
    "co-managed balancers: kube-hetzner's combined mode (`id` and its whole-balancer annotations) adds the ingress ports to Terraform's balancer, which keeps its own settings and survives the Service",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "c1", location: "fsn1" });
    await registerNode(client, "c1");
    const cp = sim.addServer({ name: "cp-tf", location: "fsn1" });
    // kube-hetzner's `hcloud_load_balancer.control_plane`: the API on 6443 to the control plane.
    const made = (await s.api("POST", "/load_balancers", {
      name: "k3s-control-plane",
      load_balancer_type: "lb11",
      location: "fsn1",
      algorithm: { type: "round_robin" },
      services: [{ protocol: "tcp", listen_port: 6443, destination_port: 6443 }],
      targets: [{ type: "server", server: { id: cp.id } }],
    })).body.load_balancer;
    const ccm = await startCcm(cluster, sim, [
      "--controllers=cloud-node,service",
      "--drift-repair-period=2s",
    ]);
    const lb = () => sim.world.loadBalancers.get(made.id)!;
    const before = () => ({
      type: lb().load_balancer_type.name,
      algorithm: lb().algorithm.type,
      location: lb().location.name,
      labels: lb().labels,
      api: lb().services.find((x) => x.listen_port === 6443),
      cp: lb().targets.filter((x) => x.type === "server"),
    });
    const kept = before();
    try {
      await eventually(async () => !!(await client.get(NODES, "c1")).spec?.providerID, 20_000);
      // The traefik Service's annotations as kube-hetzner renders them in combined mode (locals.tf).
      await client.create(
        SERVICES,
        service("traefik", {
          [`${P}id`]: String(made.id),
          [`${P}use-private-ip`]: "false",
          [`${P}disable-private-ingress`]: "true",
          [`${P}disable-public-network`]: "false",
          [`${P}ipv6-disabled`]: "false",
          [`${P}location`]: "nbg1",
          [`${P}type`]: "lb21",
          [`${P}uses-proxyprotocol`]: "true",
          [`${P}algorithm-type`]: "least_connections",
          [`${P}health-check-interval`]: "15s",
          [`${P}health-check-timeout`]: "10s",
          [`${P}health-check-retries`]: "3",
        }, [80, 443]),
      );
      await eventually(
        async () =>
          (await client.get(SERVICES, "traefik", { namespace: "default" })).status?.loadBalancer?.ingress?.[0]
            ?.ip === made.public_net.ipv4.ip,
        20_000,
      );
      assertEquals(lb().services.map((x) => x.listen_port).sort((a, b) => a - b), [80, 443, 6443]);
      assert(
        lb().services.find((x) => x.listen_port === 443)?.proxyprotocol,
        "its ports take its port settings",
      );
      assertEquals(lb().targets.filter((x) => x.type === "label_selector").length, 1);
      assertEquals(sim.world.loadBalancers.size, 1, "no balancer of its own is made");
      await new Promise((r) => setTimeout(r, 4_000)); // two drift periods: nothing is "repaired" back
      assertEquals(
        before(),
        kept,
        "type, algorithm, location, labels, the API port and its targets are Terraform's",
      );

      // helm uninstall of the ingress: its ports and target go, the balancer stays for Terraform to destroy.
      await client.delete(SERVICES, "traefik", { namespace: "default" });
      await eventually(() => lb().services.length === 1, 20_000);
      await eventually(() => lb().targets.every((x) => x.type === "server"), 20_000);
      assertEquals(before(), kept);
    } finally {
      await close(ccm);
    }
  },
});
