/**
 * helm, built from the Go module proxy by `hack/helm/build.sh` (cached), and the chart rendered with it:
 * used by the chart tests and by `deno task manifests`, which renders deploy/ from the chart.
 *
 * @module
 */
import { parseAllDocuments } from "yaml";

const REPO = new URL("..", import.meta.url).pathname;

/** The chart's folder. */
export const CHART = `${REPO}chart`;
/** The API the chart's admission policy needs (`helm template` does not assume it; a cluster of 1.30+ has it). */
export const ADMISSION_POLICY_API = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
/** The release name the static manifests are rendered as (the official chart's documented one). */
export const DEPLOY_RELEASE = "hccm";

let helmPath: Promise<string> | undefined;

/** The helm binary (built on first use). */
export function helm(): Promise<string> {
  helmPath ??= (async () => {
    const out = await new Deno.Command("bash", { args: [`${REPO}hack/helm/build.sh`], stderr: "inherit" })
      .output();
    if (!out.success) {
      throw new Error("hack/helm/build.sh failed: helm is needed (Go and the Go module proxy)");
    }
    return new TextDecoder().decode(out.stdout).trim();
  })();
  return helmPath;
}

/** The outcome of one helm command. */
export interface HelmResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs helm with `args` (and `env` added). */
export async function runHelm(args: string[], env: Record<string, string> = {}): Promise<HelmResult> {
  const out = await new Deno.Command(await helm(), { args, env, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder();
  return { ok: out.success, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** Options of {@link renderChart}. */
export interface RenderOptions {
  /** Values files, in order. */
  valuesFiles?: string[];
  /** `--set` assignments. */
  set?: string[];
  /** Extra API versions to pretend the cluster serves (CRDs such as PodMonitor). */
  apiVersions?: string[];
  release?: string;
  namespace?: string;
}

/** `helm template` of the chart: the YAML text, or an error carrying helm's message. */
export async function renderChartText(o: RenderOptions = {}): Promise<string> {
  const args = ["template", o.release ?? DEPLOY_RELEASE, CHART, "--namespace", o.namespace ?? "kube-system"];
  for (const f of o.valuesFiles ?? []) args.push("--values", f);
  for (const s of o.set ?? []) args.push("--set", s);
  for (const v of o.apiVersions ?? []) args.push("--api-versions", v);
  const r = await runHelm(args);
  if (!r.ok) throw new Error(r.stderr.trim());
  return r.stdout;
}

/** A rendered Kubernetes object (loosely typed: the tests read what they check). */
// deno-lint-ignore no-explicit-any
export type Rendered = Record<string, any>;

/** `helm template` of the chart, parsed into objects. */
export async function renderChart(o: RenderOptions = {}): Promise<Rendered[]> {
  return parseAllDocuments(await renderChartText(o)).map((d) => d.toJS()).filter((x) => x);
}

/** chart/files/defaults.yaml as values.yaml makes it (written first: the templates read it). */
export async function chartDefaults(): Promise<string> {
  return "# A copy of values.yaml (`deno task manifests`): the chart's templates read it to fill values\n" +
    "# missing under `helm upgrade --reuse-values` from another chart. Edit values.yaml, not this file.\n" +
    await Deno.readTextFile(`${CHART}/values.yaml`);
}

/** A static manifest: the chart rendered with one values file of deploy/. */
async function renderManifest(valuesFile: string): Promise<string> {
  const text = await renderChartText({
    valuesFiles: [`${REPO}deploy/${valuesFile}`],
    apiVersions: [ADMISSION_POLICY_API],
  });
  return `# Generated from chart/ with deploy/${valuesFile} by \`deno task manifests\`; edit the chart, not this file.\n` +
    text.replace(/^---\n/, "");
}

/** The text of deploy/ccm.yaml for the chart as it is now. */
export function renderDeployManifest(): Promise<string> {
  return renderManifest("values.yaml");
}

/**
 * Every file `deno task manifests` writes from the chart, by path from the repository root: the static
 * manifests (deploy/ccm.yaml; deploy/ccm-networks.yaml under the official release asset's name) and
 * chart/files/defaults.yaml, the copy of values.yaml the templates fill missing values from.
 */
export async function generatedFiles(): Promise<Record<string, string>> {
  return {
    "chart/files/defaults.yaml": await chartDefaults(),
    "deploy/ccm.yaml": await renderManifest("values.yaml"),
    "deploy/ccm-networks.yaml": await renderManifest("values-networks.yaml"),
  };
}
