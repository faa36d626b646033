/**
 * The chart's admission policy in a real kube-apiserver: every sample value of every annotation is
 * sent as a Service (server-side dry run) and the apiserver's verdict must be the CCM parser's —
 * refused with a message naming the annotation (and the value) exactly when the CCM refuses it,
 * except the listed cases the policy leaves to the CCM. Then what must never be refused: a Service
 * stored before the policy (or by the CCM's own writes), other classes and types; and Warn mode.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { parseAllDocuments } from "yaml";
import { assert, assertEquals } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { adminClient } from "../testing/ccm_harness.ts";
import { pollUntil } from "../testing/helpers.ts";
import { ADMISSION_POLICY_API, renderChartText } from "../testing/helm.ts";
import {
  type AnnotationSample,
  annotationSamples,
  ccmVerdict,
  SAMPLE_PORTS,
} from "../testing/annotation_samples.ts";
import type { KubeClient } from "../kube/client.ts";
import { PREFIX } from "../providers/hcloud/mod.ts";

const NS = "default";

function service(name: string, annotations: Record<string, string>, spec: Service["spec"] = {}): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, annotations },
    spec: { type: "LoadBalancer", ports: SAMPLE_PORTS, ...spec },
  };
}

const full = (annotations: Record<string, string>) =>
  Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k.includes("/") ? k : PREFIX + k, v]));

/** A request's outcome: refused (with the apiserver's message), and the warnings it sent. */
interface Outcome {
  refused: boolean;
  message: string;
  warnings: string[];
}

async function send(
  client: KubeClient,
  method: "POST" | "PATCH",
  body: unknown,
  name?: string,
  dryRun = true,
): Promise<Outcome> {
  const res = await client.transport.send({
    method,
    path: `/api/v1/namespaces/${NS}/services${name ? `/${name}` : ""}`,
    query: dryRun ? new URLSearchParams({ dryRun: "All" }) : undefined,
    body: JSON.stringify(body),
    contentType: method === "PATCH" ? "application/merge-patch+json" : "application/json",
  });
  const text = await res.text();
  const warnings = (res.headers.get("warning") ?? "").split(/,(?=\s*299 )/).filter(Boolean);
  return { refused: !res.ok, message: res.ok ? "" : JSON.parse(text).message ?? text, warnings };
}

/** Polls `check` for 20 s; fails naming `what`. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  if (!(await pollUntil(check, { timeoutMs: 20_000, intervalMs: 100 }))) {
    throw new Error(`timed out: ${what}`);
  }
}

/** Installs the chart's policy and binding with `actions`. */
async function installPolicy(cluster: TestCluster, actions: string[]): Promise<void> {
  const text = await renderChartText({
    set: [`admissionPolicy.validationActions={${actions.join(",")}}`],
    apiVersions: [ADMISSION_POLICY_API],
  });
  const objects = parseAllDocuments(text).map((d) => d.toJS())
    .filter((o) => o?.kind?.startsWith("ValidatingAdmissionPolicy"));
  assertEquals(objects.length, 2, "the chart renders the policy and its binding");
  await cluster.kubectl(
    ["apply", "-f", "-"],
    JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
  );
}

Deno.test({
  name: "admission policy: the apiserver refuses exactly what the CCM refuses, naming annotation and value",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const cluster = await TestCluster.start();
    try {
      const client = await adminClient(cluster);
      // Stored before the policy: values the CCM refuses.
      await send(client, "POST", service("legacy", full({ "health-check-port": "http" })), undefined, false);
      await send(
        client,
        "POST",
        service("was-cluster-ip", full({ "health-check-port": "http" }), { type: "ClusterIP" }),
        undefined,
        false,
      );
      await installPolicy(cluster, ["Deny"]);
      await eventually(
        "the policy is in force",
        async () => (await send(client, "POST", service("probe", full({ protocol: "udp" })))).refused,
      );

      await t.step("the policy type-checks", async () => {
        const name = "hcloud-cloud-controller-manager-annotations";
        const status =
          JSON.parse(await cluster.kubectl(["get", "validatingadmissionpolicy", name, "-o", "json"]))
            .status;
        assertEquals(status?.typeChecking?.expressionWarnings ?? [], []);
      });

      await t.step("every sample: the apiserver's verdict is the CCM's", async () => {
        const samples = annotationSamples();
        const disagreements: string[] = [];
        let refused = 0;
        let lenient = 0;
        const judge = async (sample: AnnotationSample, i: number) => {
          const verdict = ccmVerdict(sample);
          const out = await send(client, "POST", service(`s${i}`, full(sample.annotations)));
          const shown = JSON.stringify(sample.annotations).slice(0, 120);
          const expectRefused = verdict.invalid.length > 0 && !sample.lenient;
          if (out.refused !== expectRefused) {
            disagreements.push(
              `${shown}: CCM ${verdict.invalid.length ? `refuses (${verdict.errors[0]})` : "accepts"}, ` +
                `apiserver ${out.refused ? `refuses: ${out.message}` : "accepts"}`,
            );
            return;
          }
          if (sample.lenient) lenient++;
          if (!out.refused) return;
          refused++;
          if (!verdict.invalid.some((name) => out.message.includes(`annotation ${name}`))) {
            disagreements.push(`${shown}: the message names none of ${verdict.invalid}: ${out.message}`);
          }
          const entries = Object.values(sample.annotations);
          if (
            entries.length === 1 && /^[\x21-\x7e]{1,64}$/.test(entries[0]) &&
            !out.message.includes(entries[0])
          ) {
            disagreements.push(`${shown}: the message does not show the value: ${out.message}`);
          }
        };
        for (let i = 0; i < samples.length; i += 8) {
          await Promise.all(samples.slice(i, i + 8).map((s, j) => judge(s, i + j)));
        }
        assertEquals(disagreements, []);
        console.log(
          `${samples.length} samples: ${refused} refused as the CCM would, ${lenient} left to the CCM`,
        );
      });

      await t.step(
        "a Service stored before the policy: updates pass while the refused value is unchanged",
        async () => {
          const patch = (body: unknown) => send(client, "PATCH", body, "legacy", false);
          assert(!(await patch({ metadata: { labels: { team: "a" } } })).refused);
          assert(
            !(await patch({ metadata: { finalizers: ["service.kubernetes.io/load-balancer-cleanup"] } }))
              .refused,
          );
          assert(
            !(await patch({ metadata: { finalizers: null } })).refused,
            "the CCM can remove its finalizer",
          );
          const changed = await patch({
            metadata: { annotations: { [`${PREFIX}health-check-port`]: "https" } },
          });
          assert(
            changed.refused && changed.message.includes(`${PREFIX}health-check-port: "https"`),
            changed.message,
          );
          assert(
            !(await patch({ metadata: { annotations: { [`${PREFIX}health-check-port`]: "8080" } } })).refused,
          );
        },
      );

      await t.step("other types and classes are not judged; becoming a LoadBalancer is", async () => {
        const bad = full({ "health-check-port": "http" });
        assert(!(await send(client, "POST", service("ip", bad, { type: "ClusterIP" }))).refused);
        assert(
          !(await send(client, "POST", service("other", bad, { loadBalancerClass: "example.com/lb" })))
            .refused,
        );
        const become = await send(client, "PATCH", { spec: { type: "LoadBalancer" } }, "was-cluster-ip");
        assert(become.refused && become.message.includes(`${PREFIX}health-check-port`), become.message);
      });

      await t.step(
        "Warn (the chart's default): the Service is stored and the client is told why",
        async () => {
          await installPolicy(cluster, ["Warn"]);
          const bad = full({ "health-check-interval": "2s" });
          await eventually(
            "warn mode",
            async () => !(await send(client, "POST", service("warned", bad))).refused,
          );
          const out = await send(client, "POST", service("warned", bad));
          assert(
            out.warnings.some((w) =>
              w.includes(`annotation ${PREFIX}health-check-interval: \\"2s\\" must be between`)
            ),
            out.warnings.join("\n"),
          );
        },
      );
    } finally {
      await cluster.stop();
    }
  },
});
