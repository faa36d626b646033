/**
 * A stand-in for the official `hcloud-cloud-controller-manager` chart as v1.35.0 installs it with its
 * default replica count: the same object names (ServiceAccount and Deployment
 * `hcloud-cloud-controller-manager`, ClusterRole `system:hcloud-cloud-controller-manager` bound by
 * `system:hcloud-cloud-controller-manager:restricted`), selector labels and one replica running without
 * leader election; its values.yaml is that version's (tests/fixtures/installers/official-values-v1.35.yaml),
 * which is what `helm upgrade --reuse-values` hands the next chart. The image is never pulled (no kubelet).
 *
 * @module
 */

const REPO = new URL("..", import.meta.url).pathname;

/** The official chart's values of v1.35.0, as `helm get values --all` shows them. */
export const OFFICIAL_VALUES = `${REPO}tests/fixtures/installers/official-values-v1.35.yaml`;

/** Options of {@link officialChart}. */
export interface OfficialChartOptions {
  /**
   * A Node name the pod is bound to: its deletion then waits for that Node's kubelet (none here) as a
   * running pod's does, until the test removes it, so a test sees how long the old CCM keeps running.
   */
  nodeName?: string;
}

/** Writes the stand-in chart into a new temporary folder and returns it (the caller removes it). */
export async function officialChart(o: OfficialChartOptions = {}): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "official-chart-" });
  await Deno.mkdir(`${dir}/templates`);
  await Deno.writeTextFile(
    `${dir}/Chart.yaml`,
    "apiVersion: v2\nname: hcloud-cloud-controller-manager\nversion: 1.35.0\n",
  );
  await Deno.copyFile(OFFICIAL_VALUES, `${dir}/values.yaml`);
  const name = "hcloud-cloud-controller-manager";
  const labels = { "app.kubernetes.io/name": name, "app.kubernetes.io/instance": "{{ .Release.Name }}" };
  const role = "system:hcloud-cloud-controller-manager";
  const objects = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: "{{ .Release.Namespace }}" } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: role },
      // The official chart's v1.35.0 ClusterRole (chart/templates/clusterrole.yml).
      rules: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["events"], verbs: ["create", "patch", "update"] },
        { apiGroups: [""], resources: ["nodes"], verbs: ["*"] },
        { apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] },
        { apiGroups: [""], resources: ["services"], verbs: ["list", "watch"] },
        { apiGroups: [""], resources: ["services/status"], verbs: ["patch", "update"] },
        { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["create"] },
        {
          apiGroups: ["coordination.k8s.io"],
          resources: ["leases"],
          verbs: ["create", "get", "list", "watch", "update"],
        },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${role}:restricted` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [{ kind: "ServiceAccount", name, namespace: "{{ .Release.Namespace }}" }],
    },
    officialDeployment(labels, "{{ .Release.Namespace }}", o.nodeName),
  ];
  await Deno.writeTextFile(
    `${dir}/templates/objects.yaml`,
    objects.map((x) => JSON.stringify(x)).join("\n---\n") + "\n",
  );
  return dir;
}

/**
 * The official release asset's Deployment (`ccm-networks.yaml`, applied with kubectl): its selector is
 * `app: hcloud-cloud-controller-manager`; one replica without leader election, bound to Node `cp-1`.
 */
export function officialManifest(): string {
  return JSON.stringify(
    officialDeployment({ app: "hcloud-cloud-controller-manager" }, "kube-system", "cp-1"),
  );
}

/** The official CCM's Deployment: one replica without leader election, optionally bound to a Node. */
function officialDeployment(labels: Record<string, string>, namespace: string, nodeName?: string) {
  const name = "hcloud-cloud-controller-manager";
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 2,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: name,
          ...(nodeName ? { nodeName } : {}),
          containers: [{
            name,
            image: "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.35.0",
            args: ["--allow-untagged-cloud", "--cloud-provider=hcloud", "--leader-elect=false"],
          }],
        },
      },
    },
  };
}
