/**
 * Every write of a balancer's creation and change, applied by the API with its answer lost (issue 60
 * item 2, the response-lost half of Sieve's intermediate states), against the simulator: for each
 * mutating request of a reference run (create, then change ports and settings), a fresh run loses that
 * request's answer once; the next ensures must converge on the reference's balancer — one balancer,
 * never a second create (a new public IP for every client), the same services, targets and labels.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../testing/assert.ts";
import { startTestSim, type TestSim } from "../../../testing/sim_harness.ts";
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
  applySeed(t.sim, {
    networks: [{
      name: "k8s",
      ip_range: "10.0.0.0/8",
      subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
    }],
  });
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
  // The reference: create, change, delete; the cloud after each step, and the mutating requests in order.
  const ref = await world();
  const reference: ReturnType<typeof observed>[] = [];
  let writes: string[];
  try {
    for (const step of ref.steps) {
      await step();
      reference.push(observed(ref.t));
    }
    writes = ref.t.sim.audit.filter((e) => e.method !== "GET").map((e) => e.route);
  } finally {
    await ref.t.finish();
  }
  assert(
    writes.includes("POST /load_balancers") && writes.includes("DELETE /load_balancers/{id}"),
    writes.join(", "),
  );
  // Each write, by its route and which of that route's requests it was.
  const points = writes.map((route, i) => ({
    route,
    nth: writes.slice(0, i).filter((r) => r === route).length,
  }));
  for (const { route, nth } of points) {
    const run = await world();
    try {
      // Let the first `nth` pass, lose the answer of the next one (a proxy's timeout after the API applied it).
      const rule = {
        match: `^${route.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
        status: 504,
        code: "timeout",
        html: true,
        applied: true,
        count: 1,
        skip: nth,
      };
      run.t.sim.faults.rules.push(rule);
      const failures: string[] = [];
      for (const [i, step] of run.steps.entries()) {
        // A failed step is retried, as the controller's backoff would.
        for (let attempt = 0; attempt < 5; attempt++) {
          try {
            await step();
            break;
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
        const where = `answer of ${route} #${nth + 1} lost, step ${i + 1} (failures: ${
          failures.join(" | ")
        })`;
        assertEquals(observed(run.t), reference[i], where);
      }
      // The answer was lost (a PUT the transport repeats on its own; a POST or DELETE fails the step).
      assertEquals(rule.count, 0, `answer of ${route} #${nth + 1}: the fault must have fired`);
      const creates = run.t.sim.audit.filter((e) => e.route === "POST /load_balancers").length;
      assertEquals(
        creates,
        1,
        `answer of ${route} #${nth + 1} lost: a second create would be a new public IP`,
      );
    } finally {
      await run.t.finish();
    }
  }
  console.log(
    `lost responses: ${points.length} write(s) of the reference, each lost once: ${writes.join(", ")}`,
  );
});
