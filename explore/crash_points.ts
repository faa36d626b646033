/**
 * A crash after every write (Sieve's intermediate states): a reference workload that touches every
 * controller this world runs (Nodes join, leave, lose their server or are powered off; own, private-target and
 * shared balancers come, change and go; the firewall follows them; routes) runs once without faults, recording every write the CCM makes (cloud
 * and Kubernetes) and the end state. Then, for **each** write of that trace and each of three
 * crash modes — stopped before the answer, the answer lost, stopped right after it — the same
 * workload runs again with that one fault; a fresh CCM takes over after a crash.
 *
 * Oracle, per run: safety after every step; the normalized end state equals the reference's; no
 * more balancer creates than the reference (each is a new IP for users); liveness after the calm.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { type CrashMode, ExploreCluster, type WriteSeen } from "./cluster.ts";
import { balancerOf, Safety, seedForeign, type Violation } from "./invariants.ts";
import { liveness } from "./liveness.ts";
import { EXCLUDE_LABEL, serverId, SHARE_ANNOTATION, Workload } from "./workload.ts";

/** The three ways the CCM is stopped around one write. */
export const CRASH_MODES: CrashMode[] = ["before-answer", "answer-lost", "after-answer"];

/** One run's failure. */
export interface CrashPointFailure {
  /** The write around which the CCM was stopped. */
  write: WriteSeen;
  /** How. */
  mode: CrashMode;
  /** The property broken. */
  property: string;
  /** What was seen. */
  detail: string;
}

/** What the sweep covered and found. */
export interface CrashPointReport {
  /** When it ran (ISO 8601). */
  date: string;
  /** Writes in the reference trace. */
  crash_points: number;
  /** Runs made (crash points × modes). */
  runs: number;
  /** Crash points whose fault fired in every mode. */
  covered: number;
  /** The reference trace's writes by route (cloud and Kubernetes). */
  writes_by_route: Record<string, number>;
  /** Its wall time. */
  seconds: number;
  /** Runs per minute of wall time. */
  schedules_per_minute: number;
  /** Every failure. */
  violations: CrashPointFailure[];
  /** Whether the sweep passes: no failure, every crash point covered. */
  ok: boolean;
}

const svc = (name: string, annotations: Record<string, string> = {}): Service => ({
  metadata: { name, namespace: "default", annotations },
  spec: { type: "LoadBalancer", ports: [{ name: "http", port: 80, protocol: "TCP", nodePort: 30080 }] },
});

/** The reference workload: Nodes join, leave and lose servers; Services come, change and go. */
async function reference(c: ExploreCluster, w: Workload, check: () => void): Promise<void> {
  const ns = { namespace: "default" };
  const step = async (ms: number) => {
    await c.clock.advance(ms);
    await c.ensureRunning();
    check();
  };
  await seedForeign(c);
  await c.ensureRunning();
  await w.joinNodes(3);
  await step(30_000);
  await c.client.create(SERVICES, svc("web"), ns);
  await c.client.create(SERVICES, svc("api", { "load-balancer.hetzner.cloud/use-private-ip": "true" }), ns);
  const member = (name: string, port: number) => ({
    ...svc(name, { [SHARE_ANNOTATION]: "pool" }),
    spec: {
      type: "LoadBalancer",
      ports: [{ name: "p", port, protocol: "TCP", nodePort: 30000 + port - 8000 }],
    },
  });
  await c.client.create(SERVICES, member("shop", 8001), ns);
  await c.client.create(SERVICES, member("cart", 8002), ns);
  await step(30_000);
  await c.client.patch(SERVICES, "web", "merge", {
    spec: {
      ports: [...svc("web").spec!.ports!, { name: "tls", port: 443, protocol: "TCP", nodePort: 30443 }],
    },
  }, ns);
  await c.client.patch(NODES, "node-2", "merge", { metadata: { labels: { [EXCLUDE_LABEL]: "" } } });
  await step(30_000);
  const node3 = c.apiserver.object<Node>("nodes", "node-3");
  const gone = node3 && serverId(node3);
  if (gone !== undefined) c.sim.control.deleteServer(gone);
  await c.client.patch(NODES, "node-3", "merge", {
    status: { conditions: [{ type: "Ready", status: "Unknown", reason: "NodeStatusUnknown" }] },
  }, { subresource: "status" });
  await step(60_000);
  await c.client.patch(SERVICES, "api", "merge", {
    metadata: { annotations: { "load-balancer.hetzner.cloud/algorithm-type": "least_connections" } },
  }, ns);
  await c.client.delete(SERVICES, "web", ns);
  await step(30_000);
  await c.client.patch(SERVICES, "api", "merge", { spec: { type: "ClusterIP" } }, ns);
  await c.client.delete(SERVICES, "cart", ns);
  await step(30_000);
  await c.client.patch(SERVICES, "api", "merge", { spec: { type: "LoadBalancer" } }, ns);
  await w.joinNodes(1);
  const node1 = c.apiserver.object<Node>("nodes", "node-1");
  const off = node1 && serverId(node1);
  if (off !== undefined) c.sim.control.setPower(off, false);
  await c.client.patch(NODES, "node-1", "strategic", {
    status: { conditions: [{ type: "Ready", status: "Unknown", reason: "NodeStatusUnknown" }] },
  }, { subresource: "status" });
  await step(60_000);
  await w.calm();
  await step(10 * 60_000);
}

/**
 * The end state as users see it, without what only the order of creation decides (IDs, which
 * address a balancer or server drew): balancers by name, settings and ports; routes by the server
 * they go through; each Service's ingress checked against its balancer's address. A balancer made
 * again is caught by the count of creates, not by its new address.
 */
function normalized(c: ExploreCluster): unknown {
  const names = new Map([...c.sim.world.servers.values()].map((s) => [s.id, s.name]));
  const network = [...c.sim.world.networks.values()][0];
  const holder = new Map(
    [...c.sim.world.servers.values()].flatMap((s) => s.private_net.map((p) => [p.ip, s.name] as const)),
  );
  return {
    balancers: [...c.sim.world.loadBalancers.values()].map((lb) => ({
      name: lb.name.replace(/uid-?\d+/, "uid"),
      algorithm: lb.algorithm.type,
      services: lb.services.map((s) => `${s.protocol}:${s.listen_port}->${s.destination_port}`).sort(),
      owner: lb.id === c.foreignBalancer ? "another cluster" : "this cluster",
    })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    routes: network.routes.map((r) => `${r.destination}->${holder.get(r.gateway) ?? r.gateway}`).sort(),
    nodes: c.apiserver.objects<Node>("nodes").map((n) => ({
      name: n.metadata!.name,
      server: names.get(serverId(n) ?? -1),
      taints: (n.spec?.taints ?? []).map((t) => t.key).sort(),
    })),
    services: c.apiserver.objects<Service>("services").map((s) => {
      const ip = balancerOf(c, s)?.public_net.ipv4?.ip;
      const ingress = (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip);
      return {
        name: s.metadata!.name,
        finalizers: s.metadata?.finalizers ?? [],
        ingress: ingress.length === 0
          ? "none"
          : ip && ingress.includes(ip)
          ? "its balancer's"
          : ingress.join(),
      };
    }),
    labelled: [...c.sim.world.servers.values()].map((s) => `${s.name}:${Object.keys(s.labels).sort()}`)
      .sort(),
  };
}

/** One run of the reference workload with `fault` (or none). */
async function runOnce(fault?: { index: number; mode: CrashMode }) {
  const c = new ExploreCluster(1);
  const w = new Workload(c);
  const found: Violation[] = [];
  let fired = false;
  if (fault) {
    c.onWrite = (write) => {
      if (write.index !== fault.index) return undefined;
      fired = true;
      return fault.mode;
    };
  }
  const safety = new Safety(c, w.memory);
  try {
    await reference(c, w, () => found.push(...safety.check()));
    found.push(...liveness(c));
    const creates = c.sim.audit.filter((e) =>
      e.method === "POST" && e.route === "POST /load_balancers"
    ).length;
    return { found, state: normalized(c), writes: [...c.writes], creates, fired, ok: true };
  } catch (err) {
    found.push({ property: "harness", detail: (err as Error).stack ?? String(err) });
    return { found, state: undefined, writes: [...c.writes], creates: 0, fired, ok: false };
  } finally {
    await c.close().catch(() => {});
  }
}

/** Runs the sweep (`limit`: only the first N crash points, for a quick look). */
export async function sweepCrashPoints(
  options: { limit?: number; onRun?: (done: number, total: number) => void } = {},
): Promise<CrashPointReport> {
  const started = performance.now();
  const ref = await runOnce();
  const violations: CrashPointFailure[] = [];
  const byRoute: Record<string, number> = {};
  for (const w of ref.writes) {
    const route = w.route.replace(/\/(node-|svc-)?[\w-]+(\/status)?$/, (_m, _p, s) => `/{name}${s ?? ""}`);
    byRoute[`${w.kind} ${route}`] = (byRoute[`${w.kind} ${route}`] ?? 0) + 1;
  }
  for (const v of ref.found) {
    violations.push({ write: { kind: "cloud", route: "(reference)", index: -1 }, mode: "answer-lost", ...v });
  }
  const points = ref.writes.slice(0, options.limit ?? ref.writes.length);
  let covered = 0;
  let runs = 0;
  const expected = JSON.stringify(ref.state);
  for (const write of points) {
    let all = true;
    for (const mode of CRASH_MODES) {
      const run = await runOnce({ index: write.index, mode });
      runs++;
      all &&= run.fired;
      const fail = (property: string, detail: string) => violations.push({ write, mode, property, detail });
      for (const v of run.found) fail(v.property, v.detail);
      if (run.ok && JSON.stringify(run.state) !== expected) {
        fail("end-state", `ended as ${JSON.stringify(run.state)}; the reference as ${expected}`);
      }
      if (run.creates > ref.creates) {
        fail("no-extra-create", `${run.creates} balancer creates; the reference made ${ref.creates}`);
      }
      options.onRun?.(runs, points.length * CRASH_MODES.length);
    }
    if (all) covered++;
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    date: new Date().toISOString(),
    crash_points: ref.writes.length,
    runs,
    covered,
    writes_by_route: byRoute,
    seconds: Math.round(seconds * 10) / 10,
    schedules_per_minute: Math.round((runs + 1) / (seconds / 60)),
    violations,
    ok: violations.length === 0 && covered === points.length,
  };
}
