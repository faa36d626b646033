/**
 * `deno task manifests`: writes the chart's admission policy from the annotation table
 * (providers/hcloud/load_balancers/spec/annotation_rules.ts), copies values.yaml to chart/files/defaults.yaml, then
 * renders deploy/ccm.yaml and deploy/ccm-networks.yaml from the chart, so the static manifests and the
 * chart cannot drift (tests/chart_test.ts fails when they differ); then the reference pages, and the
 * README's and performance page's figures from bench/report.json.
 *
 * @module
 */
import { chartDefaults, generatedFiles } from "../testing/helm.ts";
import { ENV_VARS } from "../config/env.ts";
import { environmentPage } from "../config/env_reference.ts";
import { flagsPage } from "../config/flags.ts";
import { annotationsPage, policyTemplate } from "../providers/hcloud/mod.ts";
import { alertsPage, metricsPage } from "./reference_pages.ts";
import { figureBlocks, withFigures } from "../bench/figures.ts";

// The admission policy first: deploy/ccm.yaml includes it.
const policy = new URL("../chart/templates/admissionpolicy.yaml", import.meta.url).pathname;
await Deno.writeTextFile(policy, policyTemplate());
console.log(`wrote ${policy}`);

// defaults.yaml next: the templates read it.
const repo = new URL("..", import.meta.url).pathname;
const defaults = "chart/files/defaults.yaml";
await Deno.writeTextFile(`${repo}${defaults}`, await chartDefaults());
for (const [path, text] of Object.entries(await generatedFiles())) {
  await Deno.writeTextFile(`${repo}${path}`, text);
  console.log(`wrote ${repo}${path}`);
}

// The environment reference page, from config/env_reference.ts.
const envPage = `${repo}docs/reference/environment.md`;
await Deno.writeTextFile(envPage, environmentPage(ENV_VARS));
console.log(`wrote ${envPage}`);
const flagPage = `${repo}docs/reference/flags.md`;
await Deno.writeTextFile(flagPage, flagsPage());
console.log(`wrote ${flagPage}`);

// The pages made from the code's other tables: annotations, metrics, alerts.
for (
  const [page, text] of [
    ["annotations", annotationsPage()],
    ["metrics", metricsPage()],
    ["alerts", alertsPage()],
  ] as const
) {
  const path = `${repo}docs/reference/${page}.md`;
  await Deno.writeTextFile(path, text);
  console.log(`wrote ${path}`);
}

// The figures of the README and the performance page, from the benchmark report (bench/figures.ts).
const report = JSON.parse(await Deno.readTextFile(`${repo}bench/report.json`));
for (const page of ["README.md", "docs/explanation/performance.md"]) {
  const path = `${repo}${page}`;
  await Deno.writeTextFile(path, withFigures(await Deno.readTextFile(path), figureBlocks(report)));
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", path] }).output();
  console.log(`wrote ${path}`);
}
