/**
 * The mixed-cluster scenario (issue 18): 20 Cloud Nodes and 5 load balancers, then 200 Robot Nodes
 * joining at once; Robot requests counted during the join and over an idle window, against Robot's
 * hourly limit of 200 server lists. Half the Robot Nodes (and every Cloud Node) carry `pool=web`,
 * which the Services select, so each balancer targets 100 Robot IPs next to its 20 Cloud servers.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { registerNode } from "../testing/ccm_harness.ts";
import { ROBOT_LIMITS } from "../hcloud_sim/robot.ts";
import { createNodes, ingressCount, initTimes, quantile, waitFor } from "./bench_util.ts";
import { benchEnvironment } from "./environment.ts";
import { LB_ANNOTATION_PREFIX } from "../providers/hcloud/mod.ts";
import type { ScenarioResult } from "./report.ts";

const ROBOT = 200;
const CLOUD = 20;
const SERVICES_N = 5;

/** Runs the scenario; `idleMinutes` is the steady window after the join. */
export async function robotMixScenario(
  latencyMs: number,
  actionMs: number,
  idleMinutes: number,
): Promise<ScenarioResult> {
  const env = await benchEnvironment(CLOUD, {
    latencyMs,
    actionMs,
    robotServers: ROBOT,
    env: { HCLOUD_LOAD_BALANCERS_TYPE: "lb31" },
  });
  await createNodes(env.client, CLOUD, 0);
  for (let i = 0; i < CLOUD; i++) {
    await env.client.patch(NODES, `node-${i}`, "merge", { metadata: { labels: { pool: "web" } } });
  }
  await initTimes(
    env.client,
    new Set(Array.from({ length: CLOUD }, (_, i) => `node-${i}`)),
    Date.now(),
    300_000,
    [],
  );
  await Promise.all(Array.from({ length: SERVICES_N }, (_, i) => env.client.create(SERVICES, service(i))));
  await waitFor(async () => (await ingressCount(env.client)) === SERVICES_N, 600_000, 500);

  const robotBefore = env.sim.robot.audit.length;
  const cloudBefore = env.sim.audit.length;
  const start = Date.now();
  const names = Array.from({ length: ROBOT }, (_, i) => `bm-${i}`);
  for (let i = 0; i < ROBOT; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map((name, j) =>
        registerNode(env.client, name, {
          labels: (i + j) % 2 === 0 ? { pool: "web" } : {},
          status: { conditions: [ready()] },
        })
      ),
    );
  }
  const series: [number, number][] = [];
  const times = await initTimes(env.client, new Set(names), start, 600_000, series);
  const webIps = names.filter((_, i) => i % 2 === 0).length;
  await waitFor(
    () =>
      Promise.resolve(
        [...env.sim.world.loadBalancers.values()].every((lb) =>
          lb.targets.filter((t) => t.type === "ip").length === webIps
        ),
      ),
    600_000,
    500,
  );
  const joinSeconds = (Date.now() - start) / 1000;
  const robotJoin = env.sim.robot.audit.length - robotBefore;
  const cloudJoin = env.sim.audit.length - cloudBefore;

  const idleStart = Date.now();
  const robotIdleBefore = env.sim.robot.audit.length;
  await new Promise((r) => setTimeout(r, idleMinutes * 60_000));
  const hours = (Date.now() - idleStart) / 3_600_000;
  const robotIdle = env.sim.robot.audit.length - robotIdleBefore;
  const byRoute: Record<string, number> = {};
  for (const e of env.sim.robot.audit) byRoute[e.route] = (byRoute[e.route] ?? 0) + 1;
  return {
    robot_nodes: ROBOT,
    cloud_nodes: CLOUD,
    seconds_init_p50: quantile(times, 0.5),
    seconds_init_all: times.at(-1)!,
    seconds_until_targets: joinSeconds,
    robot_requests_join: robotJoin,
    robot_requests_per_joining_node: Math.round((robotJoin / ROBOT) * 1000) / 1000,
    cloud_requests_join: cloudJoin,
    robot_requests_per_hour_steady: Math.round(robotIdle / hours),
    robot_server_list_limit_per_hour: ROBOT_LIMITS["GET /server"],
    robot_requests_by_route: byRoute,
    robot_rate_limited: env.sim.robot.audit.filter((e) => e.status === 403).length,
    observed_minutes: idleMinutes,
    requests: cloudJoin,
    rss_mb_peak: env.peakRssMb(),
    cpu_seconds: await env.cpuSeconds(),
    series,
    rate_limited_responses: await env.close(),
  };
}

function service(i: number): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: `web-${i}`,
      namespace: "default",
      annotations: { [`${LB_ANNOTATION_PREFIX}node-selector`]: "pool=web" },
    },
    spec: { type: "LoadBalancer", selector: { app: `web-${i}` }, ports: [{ name: "http", port: 80 }] },
  };
}

function ready() {
  const now = new Date().toISOString();
  return {
    type: "Ready",
    status: "True",
    reason: "KubeletReady",
    message: "kubelet is ready",
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
}
