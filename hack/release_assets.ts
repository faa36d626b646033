/**
 * `deno task release:assets <version>`: the release's files besides the image and the binaries, into
 * dist/release/, as the release workflow (.github/workflows/release.yml) publishes them:
 *
 * - `ccm.yaml` and `ccm-networks.yaml`: deploy/'s manifests under the official CCM's asset names (the
 *   names kube-hetzner and hetzner-k3s download), checked to be the chart's current rendering;
 * - `rbac-for-official-chart.yaml`: what the CCM needs beyond the official chart's ClusterRole when its
 *   image runs under that chart (kube-hetzner's HelmChart);
 * - `deno-ccm-<version>.tgz`: the packaged chart;
 * - `SHA256SUMS`.
 *
 * One version everywhere, or nothing is written: the tag's (without `v`), the chart's `version` and
 * `appVersion` (the image tag the chart and the manifests name) and deno.json's `version`.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { CHART, generatedFiles, runHelm } from "../testing/helm.ts";

const REPO = new URL("..", import.meta.url).pathname;

/** The image the release publishes and the chart names by default (without its tag). */
export const RELEASE_IMAGE = "ghcr.io/deno-ccm/deno-ccm";

/** Why the release of `version` cannot be made from this checkout (empty: it can). */
export async function releaseProblems(version: string): Promise<string[]> {
  const problems: string[] = [];
  const chart = parseYaml(await Deno.readTextFile(`${CHART}/Chart.yaml`));
  const values = parseYaml(await Deno.readTextFile(`${CHART}/values.yaml`));
  const deno = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`));
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    problems.push(`"${version}" is not a version like 1.2.3`);
  }
  for (
    const [what, v] of [["chart/Chart.yaml version", chart.version], [
      "chart/Chart.yaml appVersion",
      chart.appVersion,
    ], ["deno.json version", deno.version]]
  ) {
    if (String(v) !== version) problems.push(`${what} is ${v}, not ${version}`);
  }
  if (values.image?.repository !== RELEASE_IMAGE) {
    problems.push(`chart/values.yaml image.repository is ${values.image?.repository}, not ${RELEASE_IMAGE}`);
  }
  for (const [path, text] of Object.entries(await generatedFiles())) {
    const committed = await Deno.readTextFile(`${REPO}${path}`).catch(() => "");
    if (committed !== text) problems.push(`${path} is stale: run \`deno task manifests\``);
  }
  return problems;
}

/** Writes the assets of `version` into `dir`; returns their names. */
export async function writeReleaseAssets(version: string, dir: string): Promise<string[]> {
  const problems = await releaseProblems(version);
  if (problems.length) throw new Error(`no release ${version}:\n  ${problems.join("\n  ")}`);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.copyFile(`${REPO}deploy/ccm.yaml`, `${dir}/ccm.yaml`);
  await Deno.copyFile(`${REPO}deploy/ccm-networks.yaml`, `${dir}/ccm-networks.yaml`);
  await Deno.copyFile(`${REPO}deploy/rbac-for-official-chart.yaml`, `${dir}/rbac-for-official-chart.yaml`);
  const pkg = await runHelm(["package", CHART, "--destination", dir]);
  if (!pkg.ok) throw new Error(`helm package: ${pkg.stderr}`);
  const names = ["ccm.yaml", "ccm-networks.yaml", "rbac-for-official-chart.yaml", `deno-ccm-${version}.tgz`];
  const sums: string[] = [];
  for (const name of names) {
    const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(`${dir}/${name}`));
    sums.push(`${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")}  ${name}`);
  }
  await Deno.writeTextFile(`${dir}/SHA256SUMS`, sums.join("\n") + "\n");
  return [...names, "SHA256SUMS"];
}

if (import.meta.main) {
  const version = (Deno.args[0] ?? "").replace(/^v/, "");
  try {
    const names = await writeReleaseAssets(version, `${REPO}dist/release`);
    console.log(`dist/release: ${names.join(", ")}`);
  } catch (err) {
    console.error((err as Error).message);
    Deno.exit(1);
  }
}
