/**
 * `deno task manifests`: renders deploy/ccm.yaml from the chart with deploy/values.yaml, so the static
 * manifests and the chart cannot drift (tests/chart_test.ts fails when they differ).
 *
 * @module
 */
import { renderDeployManifest } from "../testing/helm.ts";

const out = new URL("../deploy/ccm.yaml", import.meta.url).pathname;
await Deno.writeTextFile(out, await renderDeployManifest());
console.log(`wrote ${out}`);
