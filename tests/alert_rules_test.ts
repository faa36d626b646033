/**
 * The chart's alert rules, checked by Prometheus' own promtool (built from the Go module proxy):
 * the rendered PrometheusRule is a valid rule file, and each alert fires on the situation it names
 * (promtool unit tests in tests/fixtures/alert_rules_test.yaml). That the metrics they query exist is
 * checked against a running CCM in tests/ship_test.ts.
 */
import { assert } from "../testing/assert.ts";
import { renderChart } from "../testing/helm.ts";
import { stringify } from "yaml";

const REPO = new URL("..", import.meta.url).pathname;

async function promtool(): Promise<string> {
  const out = await new Deno.Command("bash", { args: [`${REPO}hack/promtool/build.sh`], stderr: "inherit" })
    .output();
  if (!out.success) {
    throw new Error("hack/promtool/build.sh failed: promtool needs Go and the Go module proxy");
  }
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("alert rules: promtool accepts the rendered rules, and each alert fires when it should", async () => {
  const objects = await renderChart({ set: ["monitoring.prometheusRule.enabled=true"] });
  const rule = objects.find((o) => o.kind === "PrometheusRule");
  assert(rule, "the chart renders a PrometheusRule");
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/alerts.yaml`, stringify(rule.spec));
    await Deno.copyFile(`${REPO}tests/fixtures/alert_rules_test.yaml`, `${dir}/alert_rules_test.yaml`);
    const bin = await promtool();
    for (const args of [["check", "rules", "alerts.yaml"], ["test", "rules", "alert_rules_test.yaml"]]) {
      const out = await new Deno.Command(bin, { args, cwd: dir, stdout: "piped", stderr: "piped" }).output();
      const text = new TextDecoder();
      assert(
        out.success,
        `promtool ${args.join(" ")}:\n${text.decode(out.stdout)}${text.decode(out.stderr)}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
