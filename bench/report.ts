/**
 * The benchmark report: report.json (one object per scenario), report.md (a table with the
 * targets) and convergence.svg (share converged over time per scenario).
 *
 * @module
 */

/**
 * Nodes joining a running cluster at once (steady_state's `--steady-burst`): seconds until the last is
 * initialized (p50 beside), the cloud requests meanwhile by endpoint, the peak RSS by then.
 */
export interface BurstResult {
  nodes: number;
  seconds_total: number;
  seconds_p50: number;
  requests: number;
  requests_by_endpoint: Record<string, number>;
  rss_mb_peak: number;
}

/** One scenario's figures; `series` (seconds, share converged) feeds the chart only. */
export interface ScenarioResult {
  seconds_total?: number;
  seconds_p50?: number;
  seconds_p99?: number;
  requests: number;
  requests_per_hour?: number;
  rss_mb_peak?: number;
  cpu_seconds?: number;
  /** 429s the CCM earned (injected ones not counted). */
  rate_limited_responses: number;
  series?: [number, number][];
  [extra: string]: unknown;
}

const OUT = new URL(".", import.meta.url).pathname;
const TARGETS: Record<string, string> = {
  burst_join: "≤ 15 s total, ≤ 30 requests",
  steady_state: "1000 nodes: ≤ 40 requests/hour, RSS ≤ 100 MB; 5000 nodes: RSS ≤ 150 MB",
  lb_rollout: "≤ 60 s",
  churn: "≤ 30 s, ≤ 2 requests per node change",
  faults: "converged ≤ 120 s after the faults stop, no leak, no live Node deleted",
  robot_mix: "200 Robot Nodes join and steady state well inside Robot's 200 server lists/hour",
  drain: "0 failed requests while every Node is replaced, with draining on",
  tls_secrets: "10 000 other Secrets add no memory; 0 requests in steady state, a handful per renewal",
  restart: "a start ≤ 40 requests at 10 000 Nodes and 200 balancers; first action within seconds (issue 64)",
};

/** Writes the three files next to this module and returns report.json's content. */
export async function writeReport(
  results: Record<string, ScenarioResult>,
  params: { latencyMs: number; actionMs: number },
): Promise<Record<string, unknown>> {
  // Scenarios not run this time keep their last figures (and chart series).
  const previous = await Deno.readTextFile(`${OUT}report.json`).then(JSON.parse, () => ({}));
  const previousSeries = await Deno.readTextFile(`${OUT}series.json`).then(JSON.parse, () => ({}));
  for (const [name, value] of Object.entries(previous)) {
    if (name in TARGETS && !(name in results)) {
      results[name] = { ...(value as ScenarioResult), series: previousSeries[name] };
    }
  }
  await Deno.writeTextFile(
    `${OUT}series.json`,
    JSON.stringify(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.series ?? []]))) + "\n",
  );
  const rateLimited = Object.values(results).reduce((sum, r) => sum + (r.rate_limited_responses ?? 0), 0);
  const report = {
    ...Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { ...v, series: undefined }])),
    rate_limited_responses: rateLimited,
    parameters: { api_latency_ms: params.latencyMs, action_ms: params.actionMs },
  };
  await Deno.writeTextFile(`${OUT}report.json`, JSON.stringify(report, null, 2) + "\n");
  // Several runs: the median run's figure, its minimum beside it, and the load averages they started at.
  const runs = (r: ScenarioResult, value: unknown, min: unknown) =>
    typeof r.runs === "number" && r.runs > 1 && value !== undefined ? `${value} (min ${min})` : value ?? "-";
  const rows = Object.entries(results).map(([name, r]) =>
    `| ${name} | ${runs(r, r.seconds_total, r.seconds_total_min)} | ${
      r.seconds_p99 ?? "-"
    } | ${r.requests} | ${r.requests_per_hour ?? "-"} | ${runs(r, r.rss_mb_peak, r.rss_mb_peak_min)} | ${
      runs(r, r.cpu_seconds, r.cpu_seconds_min)
    } | ${Array.isArray(r.load_average) ? `${r.runs} (${r.load_average.join(", ")})` : "-"} | ${
      measuredCell(r.measured)
    } | ${TARGETS[name]} |`
  );
  await Deno.writeTextFile(
    `${OUT}report.md`,
    [
      `# Benchmark (API latency ${params.latencyMs} ms, actions ${params.actionMs} ms)`,
      "",
      "| scenario | seconds total | seconds p99 | cloud requests | requests/hour | peak RSS MB | CPU s | runs (load average at each start) | measured | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
      ...rows,
      "",
      `429 responses: ${rateLimited} (the faults scenario's injected bursts not counted)`,
      "",
      ...faultsSummary(results.faults),
      ...steadyMatrix(results.steady_state),
      ...robotSummary(results.robot_mix),
      ...drainSummary(results.drain),
      ...tlsSummary(results.tls_secrets),
      ...restartSummary(results.restart),
      "![convergence](convergence.svg)",
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(`${OUT}convergence.svg`, chart(results));
  // Written as `deno fmt` would, so `deno task check` stays clean after a run.
  const files = ["series.json", "report.json", "report.md", "convergence.svg"].map((f) => `${OUT}${f}`);
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", ...files] }).output();
  return report;
}

function chart(results: Record<string, ScenarioResult>): string {
  const W = 640, H = 320, pad = 40;
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
  const series = Object.entries(results).filter(([, r]) => r.series?.length);
  const maxT = Math.max(1, ...series.flatMap(([, r]) => r.series!.map(([t]) => t)));
  const x = (t: number) => pad + (t / maxT) * (W - 2 * pad);
  const y = (v: number) => H - pad - v * (H - 2 * pad);
  const lines = series.map(([name, r], i) => {
    const points = r.series!.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    return `<polyline fill="none" stroke="${colors[i % 4]}" stroke-width="2" points="${points}"/>` +
      `<text x="${W - pad - 120}" y="${pad + 16 * i}" fill="${colors[i % 4]}" font-size="12">${name}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">
<rect width="${W}" height="${H}" fill="white"/>
<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="black"/>
<line x1="${pad}" y1="${pad}" x2="${pad}" y2="${H - pad}" stroke="black"/>
<text x="${W / 2}" y="${H - 8}" font-size="12" text-anchor="middle">seconds (max ${maxT.toFixed(1)})</text>
<text x="12" y="${H / 2}" font-size="12" transform="rotate(-90 12 ${
    H / 2
  })" text-anchor="middle">share converged</text>
${lines.join("\n")}
</svg>
`;
}

/** The draining proof in words: the same replacement of every Node, with draining on and off. */
function drainSummary(r: ScenarioResult | undefined): string[] {
  if (!r) return [];
  return [
    `## Every Node replaced under load (graceful draining)`,
    "",
    `${r.nodes} Nodes, one after the other: marked \`ToBeDeletedByClusterAutoscaler\`, out of the balancer, ` +
    `deleted with their server and replaced, while ${r.rate_per_second} requests/s (each on its own ` +
    `connection, answered after ${r.answer_ms} ms) went through the simulator's balancer and each Node's real kube-proxy (no added API latency; ` +
    `kube-proxy ` +
    `\`/healthz\` checks every 3 s). Draining on: **${r.failed_with_draining} of ${r.requests_with_draining} ` +
    `requests failed** over ${r.seconds_total} s (${r.requests} cloud requests). Draining off (the official ` +
    `CCM's behaviour): **${r.failed_without} of ${r.requests_without} failed** over ${r.seconds_without} s ` +
    `(${r.cloud_requests_without} cloud requests): requests in flight to a Node are cut when its target goes.`,
    "",
  ];
}

/** Certificates from TLS Secrets in words: memory beside many other Secrets, requests per renewal. */
function tlsSummary(r: ScenarioResult | undefined): string[] {
  if (!r) return [];
  return [
    `## Certificates from TLS Secrets`,
    "",
    `${r.services} Services serve the certificates of ${r.services} labelled TLS Secrets. Peak RSS with ` +
    `${r.other_secrets} other Secrets (2 kB each) in the cluster: **${r.rss_mb_peak} MB**; without them: ` +
    `**${r.rss_mb_peak_without_other_secrets} MB** (the CCM lists and watches only the labelled ones). ` +
    `Cloud requests: ${r.requests_first_upload} to create the ${r.services} balancers with their uploaded ` +
    `certificates; **${r.requests_per_renewal} per renewal**, 3 of them writes (find by content, upload, ` +
    `the sync's balancer lookup, the swap and its action, the re-read, list the Secret's certificates, ` +
    `delete the old one).`,
    "",
  ];
}

/** The restart scenario: one row per size. */
function restartSummary(r: ScenarioResult | undefined): string[] {
  if (!r) return [];
  type Row = Record<string, unknown> & { start_requests_by_endpoint: Record<string, number> };
  const rows = (r.matrix as Row[] | undefined) ?? [r as unknown as Row];
  const top = (by: Record<string, number>) =>
    Object.entries(by).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, n]) => `${k} ${n}`).join(", ");
  return [
    "## A start (the CCM killed and started again)",
    "",
    `Requests of the first ${r.observed_seconds} s after a start, by endpoint; seconds from the start to ` +
    "/readyz, to a new Node initialized and to a new Service's ingress (both waiting at the start); peak " +
    "anonymous and file-backed memory; a crash loop's spend at 12 starts an hour.",
    "",
    "| Nodes | balancers | start requests | most | ready s | first Node s | first Service s | anon MB | file MB | crash loop requests/hour |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((x) =>
      `| ${x.nodes} | ${x.balancers} | ${x.start_requests} | ${
        top(x.start_requests_by_endpoint)
      } | ${x.ready_seconds} | ` +
      `${x.first_node_seconds} | ${x.first_service_seconds} | ${x.rss_anon_mb_peak} | ${x.rss_file_mb} | ` +
      `${x.crash_loop_requests_per_hour} |`
    ),
    "",
  ];
}

/** The mixed Cloud and Robot scenario in words. */
function robotSummary(r: ScenarioResult | undefined): string[] {
  if (!r) return [];
  return [
    `## Mixed cluster: ${r.cloud_nodes} Cloud Nodes, ${r.robot_nodes} Robot Nodes joining at once`,
    "",
    `All Robot Nodes initialized in ${r.seconds_init_all} s (p50 ${r.seconds_init_p50} s); every balancer ` +
    `targeted its Robot Nodes' IPs after ${r.seconds_until_targets} s. Robot requests during the join: ` +
    `${r.robot_requests_join} (${r.robot_requests_per_joining_node} per joining Node; ` +
    `${JSON.stringify(r.robot_requests_by_route)} over the whole run), Robot rate-limit answers: ` +
    `${r.robot_rate_limited}. Idle for ${r.observed_minutes} min: ${r.robot_requests_per_hour_steady} Robot ` +
    `requests/hour, against Robot's limit of ${r.robot_server_list_limit_per_hour} server lists/hour.`,
    "",
  ];
}

/** The faults scenario in words: what was thrown at the CCM, and how it ended. */
function faultsSummary(r: ScenarioResult | undefined): string[] {
  if (!r) return [];
  const problems = (r.problems as string[] | undefined) ?? [];
  return [
    `Faults: ${r.service_cycles} Service cycles and ${r.node_changes} node changes in ${r.fault_seconds} s with ` +
    `${r.kills} SIGKILLs of the CCM, ${r.apiserver_restarts} apiserver restarts after etcd compactions, ` +
    `${r.injected_5xx} injected 5xx, ${r.injected_429} injected 429, ${r.latency_spikes} 3-second latency ` +
    `spikes and ${r.failed_actions} failed actions (${r.load_balancers_created} load balancers created). ` +
    (problems.length
      ? `**Not converged within 120 s:** ${problems.join("; ")}.`
      : `All invariants held ${r.seconds_total} s after the faults stopped.`),
    "",
  ];
}

/** `2026-11-27 (496f861)`: the day and commit a scenario was measured on. */
function measuredCell(m: unknown): string {
  const x = m as { date?: string; commit?: string } | undefined;
  return x?.date ? `${x.date} (${x.commit ?? "?"})` : "-";
}

/** A figure of the median run, with every run's value when there were several ("31 (30, 31, 33)"). */
function spreadCell(x: Record<string, unknown>, field: string): string {
  const all = x[`${field}_runs`];
  const value = String(x[field] ?? "-");
  return Array.isArray(all) && all.length > 1 ? `${value} (${all.join(", ")})` : value;
}

/** The steady state against N for both server refresh designs. */
function steadyMatrix(r: ScenarioResult | undefined): string[] {
  const runs = r?.matrix as Record<string, number | string | undefined>[] | undefined;
  if (!runs?.length) return [];
  const ip = runs.find((x) => x.ip_change_seconds !== undefined);
  return [
    `Steady state against N (${
      runs[0].observed_minutes
    } min idle each; \`actions\`: follow the action logs, ` +
    "a full list every 24 hours, the default; `list`: a full list at every 5-minute address refresh, as the " +
    "official CCM does). requests/hour counts the daily full list (its pages, once per 24 hours) when the window " +
    "saw none; measured is the window alone. Drift repair (a paginated list of this cluster's balancers every " +
    "10 minutes, included in both) is shown on its own.",
    "",
    "| nodes | refresh | requests/hour | measured | full list pages | drift repair requests/hour | peak RSS MB | RssAnon MB | RssFile MB | runs (load average at each start) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...runs.map((x) => {
      const loads = Array.isArray(x.load_average) ? `${x.runs} (${x.load_average.join(", ")})` : "1";
      const f = (field: string) => spreadCell(x, field);
      return x.setup_failed
        ? `| ${x.nodes} | ${x.refresh} | never reached steady state | - | - | - | ${x.rss_mb_peak} | ${x.rss_anon_mb_peak} | ${x.rss_file_mb} | ${loads} |`
        : `| ${x.nodes} | ${x.refresh} | ${f("requests_per_hour")} | ${f("requests_per_hour_measured")} | ` +
          `${x.full_list_pages} | ${x.drift_repair_requests_per_hour ?? "-"} | ${f("rss_mb_peak")} | ` +
          `${f("rss_anon_mb_peak")} | ${x.rss_file_mb} | ${loads} |`;
    }),
    "",
    ...((r?.skipped as string[] | undefined)?.length
      ? [`Not run this time (\`--steady-skip\`): ${(r!.skipped as string[]).join(", ")}.`, ""]
      : []),
    ...runs.filter((x) => x.setup_failed).map((x) =>
      `${x.nodes} nodes, \`${x.refresh}\`: ${x.setup_failed}.`
    ),
    ...(runs.some((x) => x.setup_failed) ? [""] : []),
    ...(ip
      ? [
        `A private IP changed in the cloud reached its Node after ${ip.ip_change_seconds} s (1000 nodes, ` +
        "`actions`; at most one address refresh period, 5 minutes by default), measured after the idle " +
        `window; ${ip.ip_change_requests ?? "?"} cloud requests in that time.`,
        "",
      ]
      : []),
    ...runs.filter((x) => x.burst).map((x) => {
      const b = x.burst as unknown as BurstResult;
      return `${b.nodes} more Nodes (servers just created, unlabelled) joined the ${x.nodes}-Node cluster ` +
        `(\`${x.refresh}\`) at once, after the window: all initialized in ${b.seconds_total} s (p50 ` +
        `${b.seconds_p50} s) with ${b.requests} cloud requests (${
          Object.entries(b.requests_by_endpoint).map(([k, n]) => `${k} ${n}`).join(", ")
        }); peak RSS by then ${b.rss_mb_peak} MB.\n`;
    }),
  ];
}
