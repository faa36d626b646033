/**
 * `deno task manifests`: writes the chart's admission policy from the annotation table
 * (providers/hcloud/load_balancers/annotation_rules.ts), then renders deploy/ccm.yaml from the chart with deploy/values.yaml, so the static
 * manifests and the chart cannot drift (tests/chart_test.ts fails when they differ).
 *
 * @module
 */
import { renderDeployManifest } from "../testing/helm.ts";
import { policyTemplate } from "../providers/hcloud/mod.ts";

// The admission policy first: deploy/ccm.yaml includes it.
const policy = new URL("../chart/templates/admissionpolicy.yaml", import.meta.url).pathname;
await Deno.writeTextFile(policy, policyTemplate());
console.log(`wrote ${policy}`);

const out = new URL("../deploy/ccm.yaml", import.meta.url).pathname;
await Deno.writeTextFile(out, await renderDeployManifest());
console.log(`wrote ${out}`);
