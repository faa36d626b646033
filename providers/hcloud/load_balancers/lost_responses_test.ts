/**
 * Every write of a balancer's creation and change, applied by the API with its answer lost (issue 60
 * item 2, the response-lost half of Sieve's intermediate states), against the simulator: for each
 * mutating request of a reference run (create, then change ports and settings), a fresh run loses that
 * request's answer once; the next ensures must converge on the reference's balancer — one balancer,
 * never a second create (a new public IP for every client), the same services, targets and labels.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../testing/assert.ts";
import { K8S_NETWORK, startTestSim, type TestSim } from "../../../testing/sim_harness.ts";
import { sweepLostAnswers } from "../../../testing/lost_answers.ts";
import { applySeed } from "../../../hcloud_sim/control.ts";
import { providerOnSim } from "../../../testing/provider_on_sim.ts";

const P = "load-balancer.hetzner.cloud/";
const CLUSTER = "7b0d0c3e-0000-4000-8000-00000000l057";

const service: Service = {
  metadata: {
    name: "web",
    namespace: "shop",
    uid: "uid-web",
    annotations: {
      [`${P}location`]: "nbg1",
      [`${P}use-private-ip`]: "true",
      [`${P}health-check-interval`]: "5s",
      [`${P}uses-proxyprotocol`]: "true",
    },
  },
  spec: {
    type: "LoadBalancer",
    ports: [
      { name: "http", port: 80, protocol: "TCP", nodePort: 30080 },
      { name: "https", port: 443, protocol: "TCP", nodePort: 30443 },
    ],
  },
};

/** The change: port 443 replaced by 8443, another health-check interval, proxy protocol off. */
const changed: Service = {
  ...service,
  metadata: {
    ...service.metadata,
    annotations: {
      ...service.metadata!.annotations,
      [`${P}health-check-interval`]: "10s",
      [`${P}uses-proxyprotocol`]: "false",
    },
  },
  spec: {
    ...service.spec,
    ports: [
      { name: "http", port: 80, protocol: "TCP", nodePort: 30080 },
      { name: "alt", port: 8443, protocol: "TCP", nodePort: 30843 },
    ],
  },
};

async function world() {
  const t = await startTestSim({ actionDurationMs: 0 });
  applySeed(t.sim, K8S_NETWORK);
  const provider = await providerOnSim(t, { HCLOUD_NETWORK: "k8s" }, CLUSTER);
  const servers = [1, 2].map((i) =>
    t.sim.addServer({ name: `n${i}`, location: "nbg1", labels: {}, private_net: [{ network: "k8s" }] })
  );
  const nodes: Node[] = servers.map((s, i) => ({
    metadata: { name: `n${i + 1}` },
    spec: { providerID: `hcloud://${s.id}` },
  }));
  const lbs = provider.loadBalancers!;
  /** The reference's steps: create, change, delete. */
  const steps = [
    () => lbs.ensureLoadBalancer({ clusterName: "k", service, nodes }),
    () => lbs.ensureLoadBalancer({ clusterName: "k", service: changed, nodes }),
    () => lbs.ensureLoadBalancerDeleted("k", changed),
  ];
  return { t, steps };
}

/** The cloud as a user sees it: balancers (without IDs and addresses), and the servers' labels. */
function observed(t: TestSim) {
  return {
    balancers: [...t.sim.world.loadBalancers.values()].map((lb) => ({
      name: lb.name,
      labels: lb.labels,
      services: lb.services.map((s) => JSON.stringify(s)).sort(),
      targets: lb.targets.map((x) => JSON.stringify({ ...x, server: undefined, targets: undefined })).sort(),
      networks: lb.private_net.length,
    })),
    serverLabels: [...t.sim.world.servers.values()].map((s) => s.labels),
  };
}

Deno.test("lost responses: every write of a balancer's creation, change and deletion, applied with its answer lost, converges on the reference", async () => {
  const { writes } = await sweepLostAnswers(world, observed, (t, where) => {
    const creates = t.sim.audit.filter((e) => e.route === "POST /load_balancers").length;
    assertEquals(creates, 1, `${where}: a second create would be a new public IP`);
  });
  assert(
    writes.includes("POST /load_balancers") && writes.includes("DELETE /load_balancers/{id}"),
    writes.join(", "),
  );
  console.log(
    `lost responses: ${writes.length} write(s) of the reference, each lost once: ${writes.join(", ")}`,
  );
});

Deno.test("lost responses: a shared balancer's every write (two Services join, then leave), its answer lost, converges on the reference", async () => {
  const SHARE = "service.deno-ccm.io/load-balancer-share";
  const sharedWorld = async () => {
    const t = await startTestSim({ actionDurationMs: 0 });
    const svc = (name: string, port: number, nodePort: number): Service => ({
      metadata: {
        name,
        namespace: "shop",
        uid: `uid-${name}`,
        annotations: { [`${P}location`]: "nbg1", [SHARE]: "edge" },
      },
      spec: { type: "LoadBalancer", ports: [{ name: "p", port, protocol: "TCP", nodePort }] },
    });
    const services = [svc("a", 80, 30080), svc("b", 443, 30443)];
    const gone = new Set<string>();
    const provider = await providerOnSim(t, {}, {
      clusterId: CLUSTER,
      services: () => services.filter((s) => !gone.has(s.metadata!.name!)),
    });
    const lbs = provider.loadBalancers!;
    const server = t.sim.addServer({ name: "n1", location: "nbg1", labels: {} });
    const nodes: Node[] = [{ metadata: { name: "n1" }, spec: { providerID: `hcloud://${server.id}` } }];
    // What the controller does with a result: its annotations written onto the Service.
    const keep = (s: Service, annotations?: Record<string, string | null>) => {
      for (const [k, v] of Object.entries(annotations ?? {})) {
        if (v === null) delete s.metadata!.annotations![k];
        else s.metadata!.annotations![k] = v;
      }
    };
    const ensure = async (s: Service) =>
      keep(s, (await lbs.ensureLoadBalancer({ clusterName: "k", service: s, nodes })).annotations);
    const remove = async (s: Service) => {
      gone.add(s.metadata!.name!);
      const result = await lbs.ensureLoadBalancerDeleted("k", s);
      keep(s, (result as { annotations?: Record<string, string | null> } | void)?.annotations);
    };
    return {
      t,
      steps: [
        () => ensure(services[0]),
        () => ensure(services[1]),
        () => remove(services[0]),
        () => remove(services[1]),
      ],
    };
  };
  const { writes } = await sweepLostAnswers(sharedWorld, observed, (t, where) => {
    const creates = t.sim.audit.filter((e) => e.route === "POST /load_balancers").length;
    assertEquals(creates, 1, `${where}: one shared balancer, made once`);
  });
  assert(writes.includes("DELETE /load_balancers/{id}"), writes.join(", "));
  console.log(`lost responses (shared): ${writes.length} write(s): ${writes.join(", ")}`);
});
