/**
 * The figures the README and the performance page show, rendered from `bench/report.json` with the date,
 * commit and runs of each (docs review A1–A15: no figure an operator cannot trace). `deno task manifests`
 * writes them between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->`; `docs_test.ts` fails when a
 * page's block is not the report's rendering.
 *
 * @module
 */

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** `3 runs, 2026-11-27, 496f861`: how a figure was measured. */
function when(x: Json): string {
  const runs = x.runs ?? 1;
  const m = x.measured;
  return `${runs} ${runs === 1 ? "run" : "runs"}, ${m?.date ?? "undated"}${
    m?.commit ? `, \`${m.commit}\`` : ""
  }`;
}

const s = (n: number) => `${Math.round(n * 10) / 10} s`;
const mb = (n: number) => `${Math.round(n * 10) / 10} MB`;

/** The steady-state runs of the report's matrix, by Node count (the default refresh design). */
function steady(report: Json): Json[] {
  return ((report.steady_state?.matrix ?? []) as Json[]).filter((x) =>
    x.refresh === "actions" && !x.setup_failed
  );
}

/** The README's "Why" table. */
export function readmeFigures(report: Json): string {
  const burst = report.burst_join;
  const rows = [
    [
      "500 Nodes joining at once",
      `all initialized in ${s(burst.seconds_total)} (median; fastest ${s(burst.seconds_total_min)}), ` +
      `${burst.requests} cloud requests`,
      when(burst),
    ],
    ...steady(report).map((x) => [
      `${x.nodes} Nodes idle, 50 Services`,
      `${x.requests_per_hour} cloud requests an hour (of the project's 3 600), peak RSS ${
        mb(x.rss_mb_peak)
      }` +
      (x.burst ? `; ${x.burst.nodes} more Nodes join in ${s(x.burst.seconds_total)}` : ""),
      when(x),
    ]),
  ];
  return table(["Where it counts", "deno-ccm", "measured"], rows);
}

/** The performance page's table of scenarios, with their targets. */
export function performanceFigures(report: Json): string {
  const r = report;
  const st = r.steady_state;
  const rows = [
    [
      "burst_join: 500 Nodes at once",
      `all initialized in ${s(r.burst_join.seconds_total)} (fastest ${s(r.burst_join.seconds_total_min)}), ` +
      `${r.burst_join.requests} cloud requests`,
      "≤ 15 s, ≤ 30",
      when(r.burst_join),
    ],
    [
      "lb_rollout: 50 Services on 100 Nodes",
      `all with ingress in ${s(r.lb_rollout.seconds_total)}`,
      "≤ 60 s",
      when(r.lb_rollout),
    ],
    [
      "churn: 50 join + 50 leave, 50 Services",
      `${s(r.churn.seconds_total)}, ${r.churn.requests_per_node_change} cloud requests per node change`,
      "≤ 30 s, ≤ 2",
      when(r.churn),
    ],
    [
      `steady_state: ${st.nodes} Nodes, 50 Services, ${st.observed_minutes} min idle`,
      `${st.requests_per_hour} cloud requests/hour, peak RSS ${mb(st.rss_mb_peak)} (median; least ` +
      `${mb(st.rss_mb_peak_min)}), ${st.cpu_seconds} CPU-s`,
      "≤ 40/h, ≤ 100 MB",
      when(st),
    ],
    [
      `faults: ${r.faults.service_cycles} Service cycles, ${r.faults.node_changes} node changes, ` +
      `${r.faults.kills} SIGKILLs`,
      `every invariant held ${s(r.faults.seconds_total)} after the faults ended`,
      "≤ 120 s",
      when(r.faults),
    ],
    [
      `drain: ${r.drain.nodes} Nodes replaced under ${r.drain.rate_per_second} requests/s`,
      `${r.drain.failed_with_draining} of ${r.drain.requests_with_draining} requests failed (draining off: ` +
      `${r.drain.failed_without} of ${r.drain.requests_without})`,
      "0 failed",
      when(r.drain),
    ],
    [
      `tls_secrets: ${r.tls_secrets.services} Services from Secrets, ${r.tls_secrets.other_secrets} other Secrets`,
      `peak RSS ${mb(r.tls_secrets.rss_mb_peak)} (${
        mb(r.tls_secrets.rss_mb_peak_without_other_secrets)
      } without them), ${r.tls_secrets.requests_per_renewal} requests per renewal`,
      "no added memory",
      when(r.tls_secrets),
    ],
    [
      `robot_mix: ${r.robot_mix.robot_nodes} Robot Nodes join ${r.robot_mix.cloud_nodes} Cloud Nodes`,
      `all initialized in ${
        s(r.robot_mix.seconds_init_all)
      }, ${r.robot_mix.robot_requests_per_hour_steady} ` +
      "Robot requests an hour in steady state",
      `≤ ${r.robot_mix.robot_server_list_limit_per_hour} Robot lists/hour`,
      when(r.robot_mix),
    ],
  ];
  return table(["scenario", "result", "target", "measured"], rows);
}

/** The performance page's steady state against cluster size. */
export function steadyFigures(report: Json): string {
  const rows = steady(report).map((x) => [
    String(x.nodes),
    `**${x.requests_per_hour}**`,
    String(x.full_list_pages),
    String(x.drift_repair_requests_per_hour),
    `${mb(x.rss_mb_peak)} (${mb(x.rss_anon_mb_peak)})`,
    `${x.cpu_seconds}`,
    `${when(x)}; load ${(x.load_average ?? []).join(", ")}`,
  ]);
  return table(
    [
      "Nodes",
      "requests/hour",
      "daily full list (pages)",
      "drift repair/hour",
      "peak RSS (anonymous)",
      "CPU-s",
      "measured",
    ],
    rows,
  );
}

/** The performance page's start cost by cluster size (issue 64's first figures). */
export function restartFigures(report: Json): string {
  const r = report.restart;
  if (!r) return "Not measured yet: `deno task bench --only restart`.";
  const top = (by: Record<string, number>) =>
    Object.entries(by).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, n]) => `${k} ${n}`).join(", ");
  const rows = ((r.matrix ?? [r]) as Json[]).map((x) => [
    `${x.nodes} / ${x.balancers}`,
    `**${x.start_requests}** (${top(x.start_requests_by_endpoint)})`,
    s(x.ready_seconds),
    `${s(x.first_node_seconds)} / ${s(x.first_service_seconds)}`,
    `${mb(x.rss_anon_mb_peak)} + ${mb(x.rss_file_mb)}`,
    String(x.crash_loop_requests_per_hour),
    `${when(x)}; load ${(x.load_average ?? []).join(", ") || "-"}`,
  ]);
  return table(
    [
      "Nodes / balancers",
      `requests in the first ${r.observed_seconds} s (most)`,
      "to /readyz",
      "first Node / first Service",
      "peak anonymous + file-backed",
      "crash loop requests/hour",
      "measured",
    ],
    rows,
  );
}

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ]
    .join("\n");
}

/** The figure blocks by name, from the report. */
export function figureBlocks(report: Json): Record<string, string> {
  return {
    readme: readmeFigures(report),
    performance: performanceFigures(report),
    steady: steadyFigures(report),
    restart: restartFigures(report),
  };
}

/** `text` with each `<!-- figures:NAME -->` … `<!-- /figures:NAME -->` block replaced by its rendering. */
export function withFigures(text: string, blocks: Record<string, string>): string {
  return text.replace(
    /<!-- figures:(\w+) -->\n[\s\S]*?<!-- \/figures:\1 -->/g,
    (whole, name: string) =>
      name in blocks ? `<!-- figures:${name} -->\n\n${blocks[name]}\n\n<!-- /figures:${name} -->` : whole,
  );
}
