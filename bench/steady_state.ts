/**
 * The steady-state scenario: N Nodes (kubelets reporting every 5 minutes) and 50 LoadBalancer
 * Services, idle, observed for some minutes, for each server refresh design: `actions` (follow the
 * action logs, a full list every 24 hours as the backstop) and `list` (a full list at every address
 * refresh).
 *
 * A window shorter than the full-list period would miss the periodic list: `requests_per_hour` adds
 * it (the pages a full list took here, once per period), next to what the window measured.
 * Designs run side by side per N (separate apiservers, simulators and CCMs). The servers already
 * carry the cluster's target label, as after the first hour: labelling 5000 servers one request each
 * is a one-off that alone outlasts the hourly budget (the lb_rollout scenario measures labelling).
 *
 * @module
 */
import { NODES } from "../kube/resources.ts";
import type { BurstResult, ScenarioResult } from "./report.ts";
import {
  createNodes,
  ingressCount,
  initTimes,
  joinAndRollOut,
  kubeletHeartbeats,
  quantile,
  waitFor,
} from "./bench_util.ts";
import { benchEnvironment } from "./environment.ts";
import { windowCounts } from "./window_counts.ts";
import { repeated } from "./runs.ts";

/** `HCLOUD_SERVER_REFRESH`. */
export type RefreshMode = "actions" | "list";

/** One run's figures. */
export interface SteadyRun extends ScenarioResult {
  nodes: number;
  refresh: RefreshMode;
  observed_minutes: number;
  requests_per_hour_measured: number;
  full_list_pages: number;
  /** The drift repair's list pages per hour (this cluster's balancers, every 10 minutes by default). */
  drift_repair_requests_per_hour?: number;
  rss_anon_mb_peak: number;
  rss_file_mb: number;
  requests_per_hour_by_endpoint: Record<string, number>;
  /** Seconds from a private IP change in the cloud to the Node showing it (actions, 1000 Nodes). */
  ip_change_seconds?: number;
  /** Cloud requests between the IP change and the Node showing it (all of them, whatever caused them). */
  ip_change_requests?: number;
  /** Set when the cluster never reached steady state (why, with what the CCM had done by then). */
  setup_failed?: string;
  /** After the window: more servers created in the console and their Nodes registered at once. */
  burst?: BurstResult;
}

/** `HCLOUD_SERVER_FULL_LIST_PERIOD`'s default without server labels copied to Nodes (this scenario). */
const FULL_LIST_PERIOD_H = 24;

/** The figures of a pair reported for every run, not only the median one's. */
const SPREAD = ["requests_per_hour", "requests_per_hour_measured", "rss_mb_peak", "rss_anon_mb_peak"];

/** Runs every (nodes, refresh) pair; both designs of one N at once. */
export async function steadyStateMatrix(options: {
  nodes: number[];
  refresh: RefreshMode[];
  minutes: number;
  latencyMs: number;
  actionMs: number;
  /** Pairs not run, as `nodes:refresh` (e.g. `5000:list`, whose setup alone takes 30 minutes to fail). */
  skip?: string[];
  /** Nodes joining at once after each window (0: none). */
  burst?: number;
  /** Runs of each pair: the median run by requests/hour, each run's figures beside it. */
  runs?: number;
}): Promise<SteadyRun[]> {
  const runs: SteadyRun[] = [];
  for (const nodes of options.nodes) {
    const refresh = options.refresh.filter((r) => !options.skip?.includes(`${nodes}:${r}`));
    console.log(`steady_state: ${nodes} nodes, ${refresh.join(" and ")}, ${options.minutes} min ...`);
    runs.push(
      ...await Promise.all(
        refresh.map((r) =>
          repeated(
            options.runs ?? 1,
            () =>
              steadyRun({
                ...options,
                nodes,
                refresh: r,
                measureIpChange: r === "actions" && nodes === 1000,
                burst: options.burst ?? 0,
              }),
            { key: (x) => x.requests_per_hour ?? 0, spread: SPREAD },
          ) as Promise<SteadyRun>
        ),
      ),
    );
  }
  return runs;
}

/** The report's steady_state row: 1000 Nodes with the default design, and the whole matrix. */
export function headline(runs: SteadyRun[]): ScenarioResult {
  const main = runs.find((r) => r.nodes === 1000 && r.refresh === "actions") ?? runs[0];
  return { ...main, matrix: runs.map((r) => ({ ...r, series: undefined })) };
}

async function steadyRun(o: {
  nodes: number;
  refresh: RefreshMode;
  minutes: number;
  latencyMs: number;
  actionMs: number;
  measureIpChange: boolean;
  burst: number;
}): Promise<SteadyRun> {
  const started = Date.now();
  const env = await benchEnvironment(o.nodes, {
    latencyMs: o.latencyMs,
    actionMs: o.actionMs,
    env: { HCLOUD_SERVER_REFRESH: o.refresh },
    prelabelled: true,
    networkServers: o.nodes + o.burst,
  });
  const names = Array.from({ length: o.nodes }, (_, i) => `node-${i}`);
  const setupStart = Date.now();
  try {
    await joinAndRollOut(env.client, o.nodes, 50);
  } catch (err) {
    // A design that cannot reach steady state within the API budget is a result, not a crash.
    const initialized = (await env.client.list(NODES)).items.filter((n) => !!n.spec?.providerID).length;
    const lists = env.sim.audit.filter((e) => e.route === "GET /servers").length;
    const summary =
      `${(err as Error).message.slice(0, 80)} after ${Math.round((Date.now() - setupStart) / 60_000)} min: ` +
      `${initialized} of ${o.nodes} Nodes initialized, ${await ingressCount(env.client)} of 50 balancers, ` +
      `${env.sim.audit.length} requests (${lists} server list pages), ${env.sim.rateLimited} answered 429`;
    console.log(`steady_state ${o.nodes} ${o.refresh}: setup failed: ${summary}`);
    return {
      nodes: o.nodes,
      refresh: o.refresh,
      observed_minutes: 0,
      requests: env.sim.audit.length,
      requests_per_hour_measured: 0,
      full_list_pages: 0,
      requests_per_hour_by_endpoint: {},
      rss_mb_peak: env.peakRssMb(),
      rss_anon_mb_peak: env.rssPartsMb().anon,
      rss_file_mb: env.rssPartsMb().file,
      cpu_seconds: await env.cpuSeconds(),
      setup_failed: summary,
      rate_limited_responses: await env.close(),
    };
  }
  // The one-off orphan sweep 75 s after start is not steady state: the window opens after it.
  await new Promise((r) => setTimeout(r, Math.max(0, started + 100_000 - Date.now())));
  const cpuBefore = await env.cpuSeconds();
  const start = Date.now();
  const from = env.sim.audit.length;
  const kubelets = new AbortController();
  const heartbeats = kubeletHeartbeats(env.client, names, 5 * 60_000, kubelets.signal);
  await new Promise((r) => setTimeout(r, o.minutes * 60_000));
  kubelets.abort();
  await heartbeats;
  // Exactly `minutes` long, so a 10-minute window holds the starts of two 5-minute refreshes whatever
  // their phase (a list is counted whole where it starts: see windowCounts).
  const hours = o.minutes / 60;
  const end = start + o.minutes * 60_000;
  const window = env.sim.audit.slice(from).filter((e) => e.time < end);
  await dumpAudit(env.sim.audit, { start, end, name: `${o.nodes}-${o.refresh}` });
  const pages = Math.max(
    0,
    ...env.sim.audit.filter((e) => e.route === "GET /servers").map((e) =>
      Number(new URLSearchParams(e.query).get("page") ?? 1)
    ),
  );
  const counts = windowCounts(env.sim.audit, start, end, pages);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const byEndpoint: Record<string, number> = {};
  for (const [k, n] of Object.entries(counts)) byEndpoint[k] = Math.round(n / hours * 10) / 10;
  const measured = total / hours;
  // Drift repair's pages are the full pages of this cluster's balancers (one list per pass at its
  // period; the count of one a page is the no-drift-repair check).
  const driftPages =
    window.filter((e) =>
      e.route === "GET /load_balancers" && new URLSearchParams(e.query).get("per_page") === "50"
    ).length;
  const listedInWindow = (counts["GET /servers"] ?? 0) > 0;
  const amortized = o.refresh === "actions" && !listedInWindow
    ? measured + pages / FULL_LIST_PERIOD_H
    : measured;
  const parts = env.rssPartsMb();
  const cpuSeconds = Math.round(((await env.cpuSeconds()) - cpuBefore) * 100) / 100;
  // After the window, so the window stays idle; with action logs the change costs one server read.
  const ipFrom = env.sim.audit.length;
  const ipChange = o.measureIpChange ? await measureIpChange(env) : undefined;
  const ipChangeRequests = o.measureIpChange ? env.sim.audit.length - ipFrom : undefined;
  const burst = o.burst ? await burstInto(env, o.nodes, o.burst) : undefined;
  return {
    nodes: o.nodes,
    refresh: o.refresh,
    observed_minutes: o.minutes,
    requests: total,
    requests_per_hour_measured: Math.round(measured),
    requests_per_hour: Math.round(amortized),
    full_list_pages: pages,
    drift_repair_requests_per_hour: Math.round(driftPages / hours),
    requests_per_hour_by_endpoint: byEndpoint,
    rss_mb_peak: env.peakRssMb(),
    rss_anon_mb_peak: parts.anon,
    rss_file_mb: parts.file,
    cpu_seconds: cpuSeconds,
    ip_change_seconds: ipChange,
    ip_change_requests: ipChangeRequests,
    burst,
    // Last: the CCM stops here.
    rate_limited_responses: await env.close(),
  };
}

/** Moves node-7's server to another private IP (detach and attach actions) and times the Node's update. */
async function measureIpChange(
  env: Awaited<ReturnType<typeof benchEnvironment>>,
): Promise<number | undefined> {
  const server = [...env.sim.world.servers.values()].find((s) => s.name === "node-7")!;
  const network = env.sim.world.findNetwork("k8s")!;
  const changedAt = Date.now();
  const ip = env.sim.control.moveServerIp(server.id, network.id, "10.0.250.7");
  try {
    await waitFor(
      async () =>
        (await env.client.get(NODES, "node-7")).status?.addresses?.some((a) => a.address === ip) ?? false,
      15 * 60_000,
      1_000,
    );
    return Math.round((Date.now() - changedAt) / 100) / 10;
  } catch {
    return undefined;
  }
}

/**
 * `count` servers created in the console (as an autoscaler or installer would, each a `create_server`
 * action; no target label yet), then their Nodes registered at once as kubelets do: how long until
 * every one is initialized and what the cloud was asked meanwhile.
 */
async function burstInto(
  env: Awaited<ReturnType<typeof benchEnvironment>>,
  offset: number,
  count: number,
): Promise<BurstResult> {
  console.log(`steady_state: ${count} more Nodes join ${offset} ...`);
  const names = Array.from({ length: count }, (_, i) => `node-${offset + i}`);
  for (const name of names) {
    env.sim.control.createServer({
      name,
      server_type: "cpx21",
      location: "fsn1",
      private_net: [{ network: "k8s" }],
    });
  }
  const from = env.sim.audit.length;
  const start = Date.now();
  await createNodes(env.client, count, offset);
  const times = await initTimes(env.client, new Set(names), start, 1_800_000, []);
  const requests = env.sim.audit.slice(from);
  const byEndpoint: Record<string, number> = {};
  for (const e of requests) byEndpoint[e.route] = (byEndpoint[e.route] ?? 0) + 1;
  return {
    nodes: count,
    seconds_total: times.at(-1)!,
    seconds_p50: quantile(times, 0.5),
    requests: requests.length,
    requests_by_endpoint: byEndpoint,
    rss_mb_peak: env.peakRssMb(),
  };
}

/**
 * With `BENCH_STEADY_AUDIT=<dir>`: every cloud request of the run as `<dir>/<nodes>-<refresh>.tsv`
 * (seconds relative to the window's start, endpoint, query), to see which job made which request.
 */
async function dumpAudit(
  audit: { time: number; route: string; query?: string }[],
  o: { start: number; end: number; name: string },
): Promise<void> {
  const dir = Deno.env.get("BENCH_STEADY_AUDIT");
  if (!dir) return;
  await Deno.mkdir(dir, { recursive: true });
  const lines = audit.map((e) =>
    [
      ((e.time - o.start) / 1000).toFixed(1),
      e.route,
      e.query ?? "",
      e.time >= o.start && e.time < o.end ? "window" : "",
    ]
      .join("\t")
  );
  await Deno.writeTextFile(`${dir}/${o.name}.tsv`, lines.join("\n") + "\n");
}
