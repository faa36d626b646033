/**
 * The second hostile-tenant probe's findings (issue 41) against a real kube-apiserver and the
 * simulator, with the default consent (`HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES` unset,
 * i.e. `*`): what the CCM made for one namespace serves only that namespace, ownership is proven by
 * what a tenant cannot write, names cannot collide or be squatted, one Node cannot spend the
 * budget, and a controller enabled without its RBAC says so in `/readyz`.
 */
import type { Node, Secret, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { EVENTS, NAMESPACES, NODES, SECRETS, SERVICES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/client.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY } from "./fixtures/example_com.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { chartRoleConnection } from "../testing/rbac.ts";
import { spawnCcm, writeKubeconfig } from "../testing/ccm_process.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { lbService } from "../testing/services.ts";

const P = "load-balancer.hetzner.cloud/";
const D = "service.deno-ccm.io/";
const EXCLUDE = "node.kubernetes.io/exclude-from-external-load-balancers";

function service(
  namespace: string,
  name: string,
  annotations: Record<string, string>,
  port = 443,
  nodePort?: number,
): Service {
  const svc = lbService(name, annotations, {
    ports: [{ name: "p", port, protocol: "TCP", ...(nodePort ? { nodePort } : {}) }],
  });
  svc.metadata!.namespace = namespace;
  // A co-managed balancer's place is its maker's: no location with attach-to.
  if (annotations[`${P}attach-to`]) delete svc.metadata!.annotations![`${P}location`];
  return svc;
}

async function events(client: KubeClient, namespace: string, name: string): Promise<string[]> {
  const list = await client.list(EVENTS, { namespace, fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.type} ${e.reason}: ${e.message}`);
}

async function namespaces(client: KubeClient, ...names: string[]): Promise<void> {
  for (const name of names) {
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  }
}

Deno.test({
  name: "tenant isolation: another namespace's CCM-made certificates, another cluster's balancer, " +
    "another owner's port and a colliding shared name are refused under the default consent (P1, P2, P3, P11)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, s, sim, client, close } = await testEnvironment();
    sim.addServer({ name: "w1", location: "fsn1" });
    await registerNode(client, "w1");
    await namespaces(client, "team-b", "evil", "a", "a-b");
    const ccm = await startCcm(
      cluster,
      sim,
      ["--controllers=cloud-node,service", "--drift-repair-period=0"],
      {
        HCLOUD_LOAD_BALANCERS_TLS_SECRETS: "true",
      },
    );
    const writesTo = (id: number, from: number) =>
      sim.audit.slice(from).filter((e) => e.method !== "GET" && e.path.includes(`/load_balancers/${id}`));
    const failure = async (ns: string, name: string, text: string) =>
      (await events(client, ns, name)).some((e) => e.includes("SyncLoadBalancerFailed") && e.includes(text));
    const lbOf = (ns: string, name: string) =>
      [...sim.world.loadBalancers.values()].find((b) =>
        b.labels["deno-ccm/service-namespace"] === ns && b.labels["deno-ccm/service-name"] === name
      );
    try {
      await eventually(async () => !!(await client.get(NODES, "w1")).spec?.providerID, 20_000);
      // team-b serves https from its labelled TLS Secret, and from a managed certificate.
      await client.create(SECRETS, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: "shop-tls",
          namespace: "team-b",
          labels: { "deno-ccm.io/load-balancer-tls": "true" },
        },
        type: "kubernetes.io/tls",
        stringData: { "tls.crt": EXAMPLE_CERT, "tls.key": EXAMPLE_KEY },
      } as Secret);
      await client.create(
        SERVICES,
        service("team-b", "shop", { [`${P}protocol`]: "https", [`${D}tls-secret`]: "shop-tls" }),
      );
      await client.create(
        SERVICES,
        service("team-b", "managed", {
          [`${P}protocol`]: "https",
          [`${P}certificate-type`]: "managed",
          [`${P}http-managed-certificate-domains`]: "shop.example.com",
          [`${P}http-managed-certificate-name`]: "team-b-shop",
        }),
      );
      const certificate = (pick: (labels: Record<string, string>) => boolean) =>
        [...sim.world.certificates.values()].find((c) => pick(c.labels));
      await eventually(() => !!certificate((l) => l["deno-ccm/tls-secret"] !== undefined), 30_000);
      await eventually(() => !!certificate((l) => l["hcloud-ccm/service-uid"] !== undefined), 30_000);
      const uploaded = certificate((l) => l["deno-ccm/tls-secret"] !== undefined)!;
      assertEquals(uploaded.labels["deno-ccm/secret-namespace"], "team-b");

      // P11: a balancer another cluster's official CCM made (its owner label, no cluster mark).
      const foreign = (await s.api("POST", "/load_balancers", {
        name: "other-cluster-lb",
        load_balancer_type: "lb11",
        location: "fsn1",
        labels: { "hcloud-ccm/service-uid": "3f0e8c2a-0000-4000-8000-000000000001" },
        services: [{ protocol: "tcp", listen_port: 443, destination_port: 30443, proxyprotocol: false }],
      })).body.load_balancer;
      // P2: a balancer made outside whose port 80 another owner sends to NodePort 31731.
      const outside = (await s.api("POST", "/load_balancers", {
        name: "shared-tf",
        load_balancer_type: "lb11",
        location: "fsn1",
        services: [{ protocol: "tcp", listen_port: 80, destination_port: 31731, proxyprotocol: false }],
        targets: [{ type: "server", server: { id: [...sim.world.servers.values()][0].id } }],
      })).body.load_balancer;

      const from = sim.audit.length;
      const attacks: [Service, string][] = [
        [
          service("evil", "by-id", {
            [`${P}protocol`]: "https",
            [`${P}http-certificates`]: String(uploaded.id),
          }),
          "was made by this CCM for Secret team-b/shop-tls",
        ],
        [
          service("evil", "per-port", {
            [`${D}port-443-protocol`]: "https",
            [`${D}port-443-http-certificates`]: String(uploaded.id),
          }),
          "was made by this CCM for Secret team-b/shop-tls",
        ],
        [
          service("evil", "by-name", { [`${P}protocol`]: "https", [`${P}http-certificates`]: "team-b-shop" }),
          "was made by a CCM for Service team-b/managed",
        ],
        [
          service("evil", "takeover", { [`${P}name`]: "other-cluster-lb" }, 80),
          "which is not in this cluster",
        ],
      ];
      for (const [svc] of attacks) await client.create(SERVICES, svc);
      await client.create(
        SERVICES,
        service(
          "evil",
          "port-thief",
          { [`${P}attach-to`]: "shared-tf", [`${P}uses-proxyprotocol`]: "true" },
          80,
          31731,
        ),
      );
      for (const [svc, text] of attacks) {
        await eventually(() => failure("evil", svc.metadata!.name!, text), 30_000);
        assertEquals(lbOf("evil", svc.metadata!.name!), undefined, `${svc.metadata!.name}: no balancer`);
      }
      await eventually(
        async () =>
          (await events(client, "evil", "port-thief")).some((e) => e.includes("CoManagedPortConflict")),
        30_000,
      );
      const beforeLeave = sim.world.loadBalancers.get(outside.id)!.services;
      assertEquals(beforeLeave.map((x) => [x.listen_port, x.destination_port, x.proxyprotocol]), [[
        80,
        31731,
        false,
      ]]);
      await client.delete(SERVICES, "port-thief", { namespace: "evil" });
      await eventually(
        async () =>
          !(await client.list(SERVICES, { namespace: "evil" })).items.some((x) =>
            x.metadata?.name === "port-thief"
          ),
        30_000,
      );
      assertEquals(
        sim.world.loadBalancers.get(outside.id)!.services.map((x) => [x.listen_port, x.proxyprotocol]),
        [[80, false]],
        "the other owner's port stays as it was",
      );
      assertEquals(writesTo(foreign.id, from).map((e) => e.route), [], "the foreign balancer untouched");
      assertEquals(
        writesTo(outside.id, from).filter((e) => !e.route.includes("target")).map((e) => e.route),
        [],
        "no write to the other owner's port",
      );
      const servedWith = (id: number) =>
        [...sim.world.loadBalancers.values()].filter((b) =>
          b.services.some((x) => (x.http?.certificates ?? []).includes(id))
        ).map((b) => b.labels["deno-ccm/service-namespace"]);
      assertEquals(servedWith(uploaded.id), ["team-b"], "team-b's certificate serves team-b only");

      // P6: consent withdrawn (the label removed): the certificate stays while shop names the Secret,
      // and the condition says so, not the cost warning of its unset type.
      await client.patch(SECRETS, "shop-tls", "merge", {
        metadata: { labels: { "deno-ccm.io/load-balancer-tls": null } },
      }, { namespace: "team-b" });
      await eventually(async () => {
        const shop = await client.get(SERVICES, "shop", { namespace: "team-b" });
        const ready = shop.status?.conditions?.find((c) => c.type === "LoadBalancerReady");
        return ready?.reason === "TlsSecretWithdrawn";
      }, 30_000);

      // P3: namespace a with key b-c and namespace a-b with key c both get a balancer of their own.
      await client.create(SERVICES, service("a", "x", { [`${D}load-balancer-share`]: "b-c" }, 80));
      await client.create(SERVICES, service("a-b", "y", { [`${D}load-balancer-share`]: "c" }, 80));
      const shared = (ns: string) =>
        [...sim.world.loadBalancers.values()].find((b) =>
          b.labels["deno-ccm/share"] !== undefined && b.labels["deno-ccm/service-namespace"] === ns
        );
      await eventually(() => !!shared("a") && !!shared("a-b"), 30_000);
      assert(shared("a")!.name !== shared("a-b")!.name, `${shared("a")!.name} vs ${shared("a-b")!.name}`);
      // A name taken by a balancer made outside: the refusal names the holder and the way out.
      await client.create(
        SERVICES,
        service("a", "z", { [`${D}load-balancer-share`]: "k", [`${P}name`]: "shared-tf" }, 81),
      );
      await eventually(
        () =>
          failure(
            "a",
            "z",
            `load balancer name "shared-tf" is already used by load balancer ${outside.id}, made outside Kubernetes`,
          ),
        30_000,
      );
      assert(await failure("a", "z", "load-balancer.hetzner.cloud/name"));
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name: "tenant isolation: a kubelet flapping the exclude label on its Node is held after a burst (P4)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    for (const name of ["w1", "w2"]) sim.addServer({ name, location: "fsn1" });
    for (const name of ["w1", "w2"]) await registerNode(client, name);
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service", "--drift-repair-period=0"]);
    try {
      await eventually(
        async () => (await client.list(NODES)).items.every((n: Node) => !!n.spec?.providerID),
        20_000,
      );
      for (const name of ["one", "two", "three"]) {
        await client.create(SERVICES, service("default", name, {}, 80));
      }
      await eventually(
        () => [...sim.world.servers.values()].every((x) => x.labels["deno-ccm/lb-target"]),
        30_000,
      );
      await eventually(() => sim.world.loadBalancers.size === 3, 30_000);
      const from = sim.audit.length;
      // 40 flips, as fast as a kubelet can send them (the probe: one a second, 118 writes a minute).
      for (let i = 0; i < 40; i++) {
        await client.patch(NODES, "w1", "merge", {
          metadata: { labels: { [EXCLUDE]: i % 2 ? null : "true" } },
        });
        await new Promise((r) => setTimeout(r, 50));
      }
      await eventually(
        async () => (await events(client, "default", "w1")).some((e) => e.includes("NodeChangesHeld")),
        20_000,
      );
      await new Promise((r) => setTimeout(r, 3_000));
      const writes = sim.audit.slice(from).filter((e) => e.method !== "GET");
      console.log(`cloud writes for 40 flips: ${writes.length} (${writes.map((e) => e.route).join(", ")})`);
      assert(writes.length <= 4, `at most the burst of 4 changes: ${writes.length}`);
      const warning = (await events(client, "default", "w1")).find((e) => e.includes("NodeChangesHeld"))!;
      assert(warning.includes(EXCLUDE), warning);
    } finally {
      await close(ccm);
    }
  },
});

Deno.test({
  name:
    "tenant isolation: the CSR approver or TLS Secrets enabled without their RBAC make /readyz name the chart value (P10)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cluster = await TestCluster.start();
    const t = await startTestSim();
    const dir = await Deno.makeTempDir();
    try {
      // The chart's ClusterRole as rendered with its defaults: neither feature's rules.
      const identity = await chartRoleConnection(cluster, []);
      const kubeconfig = `${dir}/kubeconfig`;
      await writeKubeconfig(kubeconfig, identity);
      // Each alone, as an operator would turn it on (a missing Secrets rule also keeps the caches
      // from syncing, so the other controllers would not start beside it).
      const runs: [string[], Record<string, string>, string][] = [
        [["--controllers=*,csr-approver"], {}, "csrApprover.enabled=true"],
        [[], { HCLOUD_LOAD_BALANCERS_TLS_SECRETS: "true" }, "tlsSecrets.enabled=true"],
      ];
      for (const [args, env, value] of runs) {
        const ccm = spawnCcm(
          [`--kubeconfig=${kubeconfig}`, "--leader-elect=false", ...args],
          { HCLOUD_TOKEN: DEFAULT_SIM_TOKEN, HCLOUD_ENDPOINT: t.sim.endpoint, ...env },
        );
        try {
          let last = "";
          await eventually(async () => {
            const res = await ccm.get("/readyz?verbose").catch(() => ({ status: 0, text: "" }));
            last = `${res.status} ${res.text}`;
            return res.status !== 200 && res.text.includes(value) && res.text.includes("403 Forbidden");
          }, 60_000).catch(() => {
            throw new Error(`/readyz: ${last}\n${ccm.output()}`);
          });
        } finally {
          ccm.child.kill("SIGTERM");
          await ccm.status;
        }
      }
    } finally {
      await t.finish();
      await cluster.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
