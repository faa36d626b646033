/**
 * Faults end to end: the simulator answers 10 % 5xx, bursts of 429, 3 s latency spikes and failed
 * actions, the CCM process is SIGKILLed at random moments and restarted, the apiserver restarts
 * after an etcd compaction, while 100 Services go through create/update/delete and 50 nodes join
 * or leave. After the faults stop, within 2 minutes: no load balancer without a live Service, every
 * LoadBalancer Service has its ingress and the right targets, no Node was deleted while its server
 * existed, and the routes match the pod CIDRs exactly.
 */
import { assert, assertEquals } from "./assert.ts";
import { TestCluster } from "./kube_cluster.ts";
import { startTestSim } from "./sim_harness.ts";
import { adminClient, registerNode, setReady } from "./ccm_harness.ts";
import { type CcmProcess, spawnCcm } from "./ccm_process.ts";
import { eventually, quietLogs } from "./helpers.ts";
import { applySeed } from "../providers/hcloud_sim/control.ts";
import { targetServerIds } from "../providers/hcloud_sim/lb_model.ts";
import { DEFAULT_SIM_TOKEN, type Simulator } from "../providers/hcloud_sim/simulator.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";

const SERVICE_CYCLES = 100;
const NODE_CHANGES = 50;

/** Retries a setup call through apiserver restarts. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0;; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i > 60) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function lbService(name: string, port = 80): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default" },
    spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ name: "p", port }] },
  };
}

Deno.test({
  name:
    "faults: 5xx, 429, latency spikes, failed actions, SIGKILLs and an apiserver restart leave no leak and converge",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    quietLogs();
    const cluster = await TestCluster.start();
    const s = await startTestSim({ actionDurationMs: 200 });
    const sim = s.sim;
    applySeed(sim, {
      networks: [{
        name: "k8s",
        ip_range: "10.0.0.0/8",
        subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
      }],
    });
    const client = await adminClient(cluster);
    const args = [
      `--kubeconfig=${cluster.kubeconfigPath}`,
      "--leader-elect=false",
      "--cluster-cidr=10.244.0.0/16",
      "--node-monitor-period=1s",
      "--route-reconciliation-period=2s",
      "--concurrent-service-syncs=5",
    ];
    const env = {
      HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
      HCLOUD_ENDPOINT: sim.endpoint,
      HCLOUD_NETWORK: "k8s",
      HCLOUD_SERVER_CACHE_MAX_AGE: "1s",
      HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
    };
    let ccm: CcmProcess = spawnCcm(args, env);
    const processes: CcmProcess[] = [ccm];
    let podIndex = 0;
    const live = new Map<string, number>(); // node name → server ID, for nodes that must stay
    const join = async (name: string) => {
      const server = sim.addServer({ name, location: "fsn1", private_net: [{ network: "k8s" }] });
      live.set(name, server.id);
      await retrying(() => registerNode(client, name, { podCIDRs: [`10.244.${podIndex++}.0/24`] }));
    };
    const leave = async (name: string) => {
      live.delete(name);
      const server = [...sim.world.servers.values()].find((x) => x.name === name)!;
      sim.world.detachServer(server, sim.world.findNetwork("k8s")!);
      sim.world.servers.delete(server.id);
      await retrying(() => setReady(client, name, false));
    };
    try {
      for (let i = 0; i < 10; i++) await join(`base-${i}`);
      await eventually(async () => (await client.list(NODES)).items.every((n) => n.spec?.providerID), 60_000);

      // Faults on.
      sim.faults.rules = [{ match: ".", rate: 0.1, status: 503, code: "unavailable" }];
      sim.faults.latencySpike = { rate: 0.02, ms: 3_000 };
      sim.world.actionFailure.rate = 0.1;
      let running = true;
      const killer = (async () => {
        while (running) {
          await new Promise((r) => setTimeout(r, 4_000 + Math.random() * 5_000));
          if (!running) break;
          ccm.child.kill("SIGKILL");
          await ccm.status;
          ccm = spawnCcm(args, env);
          processes.push(ccm);
        }
      })();
      const bursts = setInterval(() => sim.faults.rateLimitBurst = 5, 7_000);

      const services = (async () => {
        for (let batch = 0; batch < SERVICE_CYCLES; batch += 10) {
          await Promise.all(Array.from({ length: 10 }, async (_, k) => {
            const name = `cycle-${batch + k}`;
            await retrying(() => client.create(SERVICES, lbService(name)));
            await new Promise((r) => setTimeout(r, Math.random() * 1_500));
            await retrying(() =>
              client.patch(SERVICES, name, "merge", { spec: { ports: [{ name: "p", port: 8080 }] } }, {
                namespace: "default",
              })
            );
            await new Promise((r) => setTimeout(r, Math.random() * 1_500));
            await retrying(() => client.delete(SERVICES, name, { namespace: "default" }));
          }));
        }
        for (let k = 0; k < 5; k++) await retrying(() => client.create(SERVICES, lbService(`keep-${k}`)));
      })();
      const nodes = (async () => {
        for (let i = 0; i < NODE_CHANGES; i++) {
          if (i % 2 === 0) await join(`join-${i}`);
          else await leave(i < 20 ? `base-${(i - 1) / 2}` : `join-${i - 1}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      })();
      const restart = (async () => {
        await new Promise((r) => setTimeout(r, 15_000));
        await cluster.compactEtcd();
        await cluster.restartApiserver();
      })();
      await Promise.all([services, nodes, restart]);

      // Faults off; the last CCM keeps running.
      running = false;
      clearInterval(bursts);
      await killer;
      sim.faults.rules = [];
      sim.faults.latencySpike = undefined;
      sim.faults.rateLimitBurst = 0;
      sim.world.actionFailure.rate = 0;

      const deadline = 120_000;
      await eventually(async () => (await invariants(client, sim, live)).length === 0, deadline).catch(
        async () => {
          throw new Error(
            `not converged within 2 minutes:\n  ${
              (await invariants(client, sim, live)).join("\n  ")
            }\nlast CCM log:\n${ccm.output().slice(-4000)}`,
          );
        },
      );
      assert(processes.length >= 4, `the CCM was killed and restarted ${processes.length - 1} times`);
    } finally {
      for (const p of processes) {
        try {
          p.child.kill("SIGKILL");
        } catch { /* gone */ }
        await p.status;
      }
      client.transport.close();
      await s.finish();
      await cluster.stop();
    }
  },
});

/** Every violated invariant, as text (empty when converged). */
async function invariants(
  client: KubeClient,
  sim: Simulator,
  live: Map<string, number>,
): Promise<string[]> {
  const problems: string[] = [];
  const services = (await client.list(SERVICES, { namespace: "default" })).items.filter((x) =>
    x.spec?.type === "LoadBalancer"
  );
  const nodes = (await client.list(NODES)).items;
  const uids = new Set(services.map((x) => x.metadata!.uid));
  for (const lb of sim.world.loadBalancers.values()) {
    if (!uids.has(lb.labels["hcloud-ccm/service-uid"])) problems.push(`leaked load balancer ${lb.name}`);
  }
  const wantedTargets = JSON.stringify([...live.values()].sort((a, b) => a - b));
  for (const svc of services) {
    if (!(svc.status?.loadBalancer?.ingress ?? []).length) {
      problems.push(`service ${svc.metadata!.name} has no ingress`);
    }
    const lb = [...sim.world.loadBalancers.values()].find((x) =>
      x.labels["hcloud-ccm/service-uid"] === svc.metadata!.uid
    );
    if (!lb) problems.push(`service ${svc.metadata!.name} has no load balancer`);
    else if (JSON.stringify(targetServerIds(sim.world, lb)) !== wantedTargets) {
      const got = targetServerIds(sim.world, lb);
      const want = [...live.values()];
      problems.push(
        `load balancer ${lb.name} targets: missing ${want.filter((x) => !got.includes(x))}; extra ${
          got.filter((x) => !want.includes(x))
        }`,
      );
    }
  }
  const names = new Set(nodes.map((n) => n.metadata!.name!));
  for (const name of live.keys()) {
    if (!names.has(name)) problems.push(`node ${name} was deleted although its server exists`);
  }
  for (const n of nodes) {
    if (!live.has(n.metadata!.name!)) problems.push(`node ${n.metadata!.name} should be deleted`);
  }
  const wantRoutes = nodes.filter((n) => live.has(n.metadata!.name!)).map((n) =>
    `${n.spec!.podCIDRs![0]} via ${(n.status?.addresses ?? []).find((a) => a.type === "InternalIP")?.address}`
  ).sort();
  const routes = sim.world.findNetwork("k8s")!.routes.map((r) => `${r.destination} via ${r.gateway}`).sort();
  if (JSON.stringify(routes) !== JSON.stringify(wantRoutes)) {
    problems.push(`routes ${routes.length} vs wanted ${wantRoutes.length}`);
  }
  assertEquals(typeof problems.length, "number");
  return problems;
}
