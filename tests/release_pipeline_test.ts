/**
 * Where the image comes from: the release workflow (.github/workflows/release.yml) passes actionlint
 * (built from the Go module proxy), publishes the image the chart names by default, builds it from
 * deploy/Containerfile for both architectures and runs the suite first; its asset step
 * (hack/release_assets.ts) runs here for the current version: the manifests under the official asset
 * names name that image and tag, the packaged chart renders it, SHA256SUMS holds; a tag that is not the
 * chart's version is refused, naming both.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { RELEASE_IMAGE, releaseProblems, writeReleaseAssets } from "../hack/release_assets.ts";
import { runHelm } from "../testing/helm.ts";
import { parse as parseYaml } from "yaml";

const REPO = new URL("..", import.meta.url).pathname;
const WORKFLOWS = `${REPO}.github/workflows`;

async function actionlint(): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [`${REPO}hack/actionlint/build.sh`],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) {
    throw new Error("hack/actionlint/build.sh failed: actionlint is needed (Go and the Go module proxy)");
  }
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("release: the workflow passes actionlint and publishes what the chart names", async () => {
  const files = [...Deno.readDirSync(WORKFLOWS)].map((e) => `${WORKFLOWS}/${e.name}`);
  assert(files.length > 0);
  const lint = await new Deno.Command(await actionlint(), {
    args: ["-color=false", ...files],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  assert(lint.success, `actionlint:\n${text.decode(lint.stdout)}${text.decode(lint.stderr)}`);

  const workflow = parseYaml(await Deno.readTextFile(`${WORKFLOWS}/release.yml`));
  const steps = (job: string) => workflow.jobs[job].steps as Record<string, Record<string, string>>[];
  assert(
    steps("test").some((s) => String(s.run).includes(".ci/run")),
    "the suite runs before anything is published",
  );
  for (const job of ["image", "assets"]) assertEquals(workflow.jobs[job].needs, "test");
  const build = steps("image").find((s) => String(s.uses).startsWith("docker/build-push-action"))!;
  assertEquals(build.with.file, "deploy/Containerfile");
  assertEquals(build.with.platforms, "linux/amd64,linux/arm64");
  assertEquals(build.with.tags, `${RELEASE_IMAGE}:\${{ steps.version.outputs.version }}`);
  const runs = steps("assets").map((s) => String(s.run ?? "")).join("\n");
  for (const expected of ["hack/release_assets.ts", "task compile:amd64", "task compile:arm64", "oci://"]) {
    assert(runs.includes(expected), `the assets job runs ${expected}`);
  }
  const values = parseYaml(await Deno.readTextFile(`${REPO}chart/values.yaml`));
  assertEquals([values.image.repository, values.image.tag], [RELEASE_IMAGE, "{{ $.Chart.AppVersion }}"]);
});

Deno.test({
  name: "release: the asset step writes the manifests, the chart and checksums for the chart's version",
  sanitizeResources: false,
  async fn() {
    const chart = parseYaml(await Deno.readTextFile(`${REPO}chart/Chart.yaml`));
    const version = String(chart.appVersion);
    assertEquals(await releaseProblems(version), []);
    assertEquals(await releaseProblems("9.9.9"), [
      `chart/Chart.yaml version is ${chart.version}, not 9.9.9`,
      `chart/Chart.yaml appVersion is ${version}, not 9.9.9`,
      `deno.json version is ${version}, not 9.9.9`,
    ]);
    const dir = await Deno.makeTempDir({ prefix: "release-" });
    try {
      const names = await writeReleaseAssets(version, dir);
      assertEquals(names, [
        "ccm.yaml",
        "ccm-networks.yaml",
        "rbac-for-official-chart.yaml",
        `deno-ccm-${version}.tgz`,
        "SHA256SUMS",
      ]);
      const image = `${RELEASE_IMAGE}:${version}`;
      for (const manifest of ["ccm.yaml", "ccm-networks.yaml"]) {
        assert((await Deno.readTextFile(`${dir}/${manifest}`)).includes(`image: "${image}"`), manifest);
      }
      const rendered = await runHelm(["template", "hccm", `${dir}/deno-ccm-${version}.tgz`]);
      assert(rendered.ok, rendered.stderr);
      assert(rendered.stdout.includes(`image: "${image}"`), "the packaged chart runs the published image");
      const sums = await Deno.readTextFile(`${dir}/SHA256SUMS`);
      const check = await new Deno.Command("sha256sum", {
        args: ["--check", "--quiet"],
        cwd: dir,
        stdin: "piped",
      })
        .spawn();
      const w = check.stdin.getWriter();
      await w.write(new TextEncoder().encode(sums));
      await w.close();
      assert((await check.status).success, "SHA256SUMS matches the files");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
