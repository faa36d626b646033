/**
 * The Helm chart, for real: helm (built from the Go module proxy) lints and renders it for the default
 * values, the official chart's example value sets and a file setting every option; each rendering is
 * applied to a real kube-apiserver with a server-side dry run; deploy/ must be the chart's rendering;
 * bad values fail at install time naming the value (the installers' values and the migration from the
 * official chart: chart_installers_test.ts, chart_migration_test.ts).
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { parseFlags } from "../config/flags.ts";
import { resolveControllers } from "../config/controllers_flag.ts";
import { ipamPlan } from "../controllers/mod.ts";
import { parseAllDocuments } from "yaml";
import {
  ADMISSION_POLICY_API,
  CHART,
  generatedFiles,
  renderChart,
  renderChartText,
  type Rendered,
  runHelm,
} from "../testing/helm.ts";

const REPO = new URL("..", import.meta.url).pathname;
const CI = `${CHART}/ci`;
const CRDS = [
  "monitoring.coreos.com/v1/PodMonitor",
  "monitoring.coreos.com/v1/ServiceMonitor",
  ADMISSION_POLICY_API,
];

/** Minimal CRDs of prometheus-operator's kinds, so their objects can be dry-run applied. */
function monitoringCrds(): string {
  return ["PodMonitor", "ServiceMonitor", "PrometheusRule"].map((kind) => {
    const plural = `${kind.toLowerCase()}s`;
    return JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${plural}.monitoring.coreos.com` },
      spec: {
        group: "monitoring.coreos.com",
        names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
        scope: "Namespaced",
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        }],
      },
    });
  }).join("\n---\n");
}

const byKind = (objects: Rendered[], kind: string) => objects.filter((o) => o.kind === kind);
const one = (objects: Rendered[], kind: string) => {
  const found = byKind(objects, kind);
  assertEquals(found.length, 1, `one ${kind}`);
  return found[0];
};
const workload = (objects: Rendered[]) =>
  objects.find((o) => o.kind === "Deployment" || o.kind === "DaemonSet")!;
const container = (objects: Rendered[]) => workload(objects).spec.template.spec.containers[0];
const envNamed = (objects: Rendered[], name: string) =>
  (container(objects).env ?? []).find((e: Rendered) => e.name === name);

/** What each values file must render, beyond applying cleanly. */
const EXPECT: Record<string, (o: Rendered[]) => void> = {
  "(defaults)": (o) => {
    const d = one(o, "Deployment");
    assertEquals(d.metadata.name, "hcloud-cloud-controller-manager", "the official chart's object name");
    assertEquals(d.spec.replicas, 2);
    assert(container(o).args.includes("--leader-elect=true"));
    // `helm template` cannot see what runs: it replaces it with Recreate.
    assertEquals(d.spec.strategy, { type: "Recreate" });
    assertEquals(d.spec.template.spec.hostNetwork, undefined);
    assertEquals(envNamed(o, "HCLOUD_TOKEN").valueFrom.secretKeyRef, { name: "hcloud", key: "token" });
    assertEquals(container(o).ports.find((p: Rendered) => p.name === "metrics").containerPort, 8233);
    assertEquals(container(o).securityContext.readOnlyRootFilesystem, true);
    assertEquals(d.spec.template.spec.securityContext.runAsNonRoot, true);
    assertEquals(container(o).readinessProbe.httpGet.path, "/readyz");
    one(o, "PodDisruptionBudget");
    assertEquals(one(o, "ValidatingAdmissionPolicyBinding").spec.validationActions, ["Warn"]);
    assertEquals(one(o, "ValidatingAdmissionPolicy").spec.failurePolicy, "Ignore");
    const verbs = one(o, "ClusterRole").rules.flatMap((r: Rendered) =>
      r.resources.flatMap((res: string) => r.verbs.map((v: string) => `${res}:${v}`))
    ).sort();
    assertEquals(verbs, [
      "events:create",
      "events:patch",
      "leases:create",
      "leases:get",
      "leases:update",
      "namespaces:get",
      "nodes/status:patch",
      "nodes:delete",
      "nodes:list",
      "nodes:patch",
      "nodes:watch",
      "services/status:patch",
      "services:list",
      "services:watch",
    ]);
  },
  "node-ipam-values.yaml": (o) => {
    const args: string[] = container(o).args;
    for (
      const want of [
        "--controllers=*,kubelet-serving-csr-approver,node-ipam-controller",
        "--allocate-node-cidrs=true",
        "--cluster-cidr=10.244.0.0/16,2a01:4f8::/29",
        "--cidr-allocator-type=CloudAllocator",
        "--node-cidr-mask-size-ipv6=96",
      ]
    ) assert(args.includes(want), `${want} in ${args}`);
    const { flags, errors } = parseFlags(args);
    assertEquals([...errors, ...ipamPlan(flags).errors], [], "the CCM takes them");
    assert(resolveControllers(flags.controllers).enabled.has("node-ipam-controller"));
    assert(!(container(o).env ?? []).some((e: Rendered) => e.name === "HCLOUD_NETWORK"), "no routes asked");
  },
  "csr-approver-values.yaml": (o) => {
    const args: string[] = container(o).args;
    assertEquals(args.filter((a) => a.startsWith("--controllers")), [
      "--controllers=*,-node-route-controller,kubelet-serving-csr-approver",
    ]);
    assert(args.includes("--kubelet-serving-csr-deny=false"));
    const enabled = resolveControllers(parseFlags(args).flags.controllers).enabled;
    assert(enabled.has("kubelet-serving-csr-approver") && !enabled.has("node-route-controller"));
    const rules = one(o, "ClusterRole").rules.filter((r: Rendered) =>
      r.apiGroups.includes("certificates.k8s.io")
    );
    assertEquals(rules, [
      {
        apiGroups: ["certificates.k8s.io"],
        resources: ["certificatesigningrequests"],
        verbs: ["list", "watch"],
      },
      {
        apiGroups: ["certificates.k8s.io"],
        resources: ["certificatesigningrequests/approval"],
        verbs: ["update"],
      },
      {
        apiGroups: ["certificates.k8s.io"],
        resources: ["signers"],
        resourceNames: ["kubernetes.io/kubelet-serving"],
        verbs: ["approve"],
      },
    ]);
  },
  "single-replica-values.yaml": (o) => {
    assert(container(o).args.includes("--leader-elect=true"), "one replica still takes the lease");
    assertEquals(byKind(o, "PodDisruptionBudget").length, 0);
    assert(
      !one(o, "ClusterRole").rules.some((r: Rendered) => r.resources.includes("secrets")),
      "no access to Secrets unless tlsSecrets.enabled",
    );
  },
  "official-example-prod-values.yaml": (o) => {
    const d = one(o, "Deployment");
    assertEquals(d.spec.replicas, 3);
    assertEquals(d.spec.template.spec.hostNetwork, true);
    assert(container(o).args.includes("--allocate-node-cidrs=true"));
    assert(container(o).args.includes("--cluster-cidr=10.42.0.0/16"));
    assertEquals(envNamed(o, "HCLOUD_NETWORK").valueFrom.secretKeyRef, { name: "hcloud", key: "network" });
    const pm = one(o, "PodMonitor");
    assertEquals(pm.spec.podMetricsEndpoints, [{ port: "metrics" }]);
    assertEquals(pm.spec.selector.matchLabels, d.spec.selector.matchLabels);
  },
  "official-full-values.yaml": (o) => {
    assertEquals(envNamed(o, "HCLOUD_TOKEN"), undefined, "HCLOUD_TOKEN: null drops it");
    assertEquals(envNamed(o, "HCLOUD_TOKEN_FILE").value, "/etc/hetzner/token");
    assertEquals(container(o).volumeMounts[0].mountPath, "/etc/hetzner");
    const pod = workload(o).spec.template;
    assertEquals(pod.metadata.labels.team, "platform");
    assert(pod.spec.tolerations.some((t: Rendered) => t.key === "dedicated"));
    assertEquals(one(o, "PodMonitor").metadata.labels.team, "platform");
  },
  "official-daemonset-values.yaml": (o) => {
    one(o, "DaemonSet");
    assertEquals(byKind(o, "Deployment").length, 0);
    assertEquals(byKind(o, "PodDisruptionBudget").length, 0);
    assertEquals(one(o, "ServiceAccount").metadata.annotations, {
      "example.com/purpose": "cloud-controller-manager",
    });
  },
  "every-option-values.yaml": (o) => {
    const d = one(o, "Deployment");
    assertEquals(d.metadata.name, "deno-ccm");
    assertEquals(one(o, "ValidatingAdmissionPolicyBinding").spec.validationActions, ["Deny", "Audit"]);
    assertEquals(container(o).image, "registry.example.com/mirror/deno-ccm:0.1.0");
    assert(container(o).args.includes("--cluster-cidr=10.244.0.0/16,fd00:10:244::/56"));
    assert(container(o).args.includes("--secure-port=10300"));
    const env = container(o).env as { name: string; value?: string }[];
    assertEquals(
      env.find((e) => e.name === "ROBOT_ENABLED")?.value,
      "true",
      "robot.enabled sets ROBOT_ENABLED",
    );
    assert(env.some((e) => e.name === "ROBOT_PASSWORD"), "the Robot credentials come from the Secret");
    assertEquals(env.find((e) => e.name === "HCLOUD_LOAD_BALANCERS_TLS_SECRETS")?.value, "true");
    assertEquals(env.find((e) => e.name === "HCLOUD_LOAD_BALANCERS_FIREWALL")?.value, "k8s-nodes");
    assertEquals(
      env.find((e) => e.name === "HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES")?.value,
      "shop,admin",
    );
    const secretsRule = one(o, "ClusterRole").rules.find((r: Rendered) => r.resources.includes("secrets"));
    assertEquals(secretsRule?.verbs, ["get", "list", "watch"], "tlsSecrets.enabled grants reading Secrets");
    const rule = one(o, "PrometheusRule");
    const budget = rule.spec.groups[0].rules.find((r: Rendered) => r.alert === "DenoCcmCloudApiBudgetLow");
    assertEquals(budget.expr, "min(hcloud_api_ratelimit_remaining) < 500");
    const dashboard = JSON.parse(one(o, "ConfigMap").data["deno-ccm.json"]);
    assertEquals(dashboard.uid, "deno-ccm");
    const svc = one(o, "Service");
    const sm = one(o, "ServiceMonitor");
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) {
      assertEquals(svc.metadata.labels[k], v);
    }
    for (const [k, v] of Object.entries(svc.spec.selector)) {
      assertEquals(d.spec.template.metadata.labels[k], v);
    }
    one(o, "NetworkPolicy");
  },
};

Deno.test({
  name: "chart: lint, render and server-side dry run for every values file; deploy/ is its rendering",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const cluster = await TestCluster.start();
    try {
      await cluster.kubectl(["apply", "-f", "-"], monitoringCrds());
      await cluster.kubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=30s"]);
      const files = [...Deno.readDirSync(CI)].map((e) => e.name).filter((n) => n.endsWith(".yaml")).sort();
      assertEquals(files.sort(), Object.keys(EXPECT).filter((k) => k !== "(defaults)").sort());
      const counts: string[] = [];
      for (const name of ["(defaults)", ...files]) {
        await t.step(name, async () => {
          const valuesFiles = name === "(defaults)" ? [] : [`${CI}/${name}`];
          const lint = await runHelm([
            "lint",
            "--strict",
            CHART,
            ...valuesFiles.flatMap((f) => ["--values", f]),
          ]);
          assert(lint.ok, `helm lint ${name}:\n${lint.stdout}${lint.stderr}`);
          const text = await renderChartText({ valuesFiles, apiVersions: CRDS });
          const objects = await renderChart({ valuesFiles, apiVersions: CRDS });
          EXPECT[name](objects);
          // The CCM accepts the rendered command line.
          const { errors } = parseFlags(container(objects).args);
          assertEquals(errors, [], `${name}: the CCM rejects the chart's flags`);
          await cluster.kubectl(["apply", "--dry-run=server", "-f", "-"], text);
          const kinds = new Map<string, number>();
          for (const o of objects) kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
          counts.push(
            `${name}: ${objects.length} objects (${[...kinds].map(([k, n]) => `${n} ${k}`).join(", ")})`,
          );
        });
      }
      console.log(counts.join("\n"));

      await t.step(
        "deploy/ccm.yaml, deploy/ccm-networks.yaml and chart/files/defaults.yaml are generated",
        async () => {
          for (const [path, text] of Object.entries(await generatedFiles())) {
            const committed = await Deno.readTextFile(`${REPO}${path}`);
            assert(committed === text, `${path} is stale: run \`deno task manifests\``);
          }
        },
      );

      await t.step("deploy/ccm-networks.yaml survives the installers' --cluster-cidr rewrite", async () => {
        // hetzner-k3s and kube-hetzner replace `--cluster-cidr=[^"]+` in the official asset of this name.
        const text = await Deno.readTextFile(`${REPO}deploy/ccm-networks.yaml`);
        const rewritten = text.replace(/--cluster-cidr=[^"]+/g, "--cluster-cidr=10.42.0.0/16");
        assertEquals([...text.matchAll(/--cluster-cidr=/g)].length, 1);
        const objects = parseAllDocuments(rewritten).map((d) => d.toJS()).filter((x) => x) as Rendered[];
        assert(container(objects).args.includes("--cluster-cidr=10.42.0.0/16"));
        assertEquals(parseFlags(container(objects).args).errors, []);
        await cluster.kubectl(["apply", "--dry-run=server", "-f", "-"], rewritten);
      });

      await t.step("bad values fail at render time, naming the value", async () => {
        const cases: [string[], RegExp][] = [
          [["kind=Job"], /\/kind.*Deployment.*DaemonSet/],
          [["networking.enabled=true", "networking.clusterCIDR=10.244.0.0"], /networking\/clusterCIDR/],
          [["replicaCount=0"], /replicaCount/],
          [["monitoring.serviceMonitor.enable=true"], /additional properties 'enable'/],
          [["networking.enabled=maybe"], /networking\/enabled.*true, false/],
        ];
        for (const [set, message] of cases) {
          const r = await renderChartText({ set }).then(() => "", (e: Error) => e.message);
          assert(message.test(r), `--set ${set.join(",")}: ${r || "rendered"}`);
        }
      });

      await t.step("a missing token Secret fails `helm install`, naming it", async () => {
        const env = { KUBECONFIG: cluster.kubeconfigPath };
        const install = ["install", "hccm", CHART, "--namespace", "kube-system", "--dry-run=server"];
        const missing = await runHelm(install, env);
        assert(!missing.ok);
        assert(
          missing.stderr.includes("env.HCLOUD_TOKEN: Secret kube-system/hcloud does not exist"),
          missing.stderr,
        );
        await cluster.createSecret("kube-system", "hcloud", { x: "y" });
        const noKey = await runHelm(install, env);
        assert(noKey.stderr.includes(`Secret kube-system/hcloud has no key "token"`), noKey.stderr);
        await cluster.kubectl(["-n", "kube-system", "delete", "secret", "hcloud"]);
        await cluster.createSecret("kube-system", "hcloud", { token: "t" });
        const ok = await runHelm(install, env);
        assert(ok.ok, ok.stderr);
      });
    } finally {
      await cluster.stop();
    }
  },
});
