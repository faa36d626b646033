/**
 * Running the CCM with exactly the chart's ClusterRole: least privilege proven, not claimed.
 *
 * @module
 */
import type { ClusterConnection } from "../kube/kubeconfig.ts";
import type { TestCluster } from "./kube_cluster.ts";
import { renderChart } from "./helm.ts";

/**
 * Binds the chart's ClusterRole (rendered with the `set` values) to the user `deno-ccm-under-test`
 * and returns a connection as that user, for `startCcm`.
 */
export async function chartRoleConnection(cluster: TestCluster, set: string[]): Promise<ClusterConnection> {
  const role = (await renderChart({ set })).find((o) => o.kind === "ClusterRole")!;
  role.metadata = { name: "deno-ccm-under-test" };
  const binding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "deno-ccm-under-test" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "deno-ccm-under-test" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "deno-ccm-under-test" }],
  };
  await cluster.kubectl(
    ["apply", "-f", "-"],
    JSON.stringify({ apiVersion: "v1", kind: "List", items: [role, binding] }),
  );
  return await cluster.userConnection("deno-ccm-under-test");
}
