/**
 * kube-hetzner's lasting path (docs/guides/migrating-from-hccm.md): its k3s HelmChart keeps installing the
 * official chart, with `image.repository` swapped to ours. The CCM then runs as the official chart's
 * ServiceAccount, under its ClusterRole (v1.35.0) plus `deploy/rbac-for-official-chart.yaml`, with the
 * arguments the official chart renders from kube-hetzner's v3 values (`--leader-elect=false` at one
 * replica). It gets no Forbidden answer, knows the cluster identity (balancers get the label-selector
 * target, which needs it), takes the lease although leader election is off, and its other-CCM check sees.
 */
import { parse as parseYaml, parseAllDocuments } from "yaml";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { runHelm } from "../testing/helm.ts";
import { officialChart } from "../testing/official_chart.ts";
import { LEASES, NODES, SERVICES } from "../kube/resources.ts";
import { seedScenario } from "../testing/e2e_scenario.ts";

const REPO = new URL("..", import.meta.url).pathname;
const ACCOUNT = "hcloud-cloud-controller-manager";

/** The official chart's `args` rule (deployment.yaml): each key sorted, `--key` when empty, else `--key=value`. */
function officialArgs(
  values: { args: Record<string, string>; networking?: { clusterCIDR?: string } },
): string[] {
  const args = Object.keys(values.args).sort().map((k) =>
    values.args[k] ? `--${k}=${values.args[k]}` : `--${k}`
  );
  if (values.networking?.clusterCIDR) {
    args.push("--allocate-node-cidrs=true", `--cluster-cidr=${values.networking.clusterCIDR}`);
  }
  return [...args, "--leader-elect=false"]; // replicaCount 1
}

Deno.test({
  name: "image swap: ours under the official chart's ServiceAccount, RBAC and kube-hetzner's arguments",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    // The official chart's ServiceAccount, ClusterRole and binding, and our extra grants.
    const rendered = await runHelm(["template", "hccm", await officialChart(), "--namespace", "kube-system"]);
    assert(rendered.ok, rendered.stderr);
    const rbac = parseAllDocuments(rendered.stdout).map((d) => d.toJS()).filter((o) =>
      o && o.kind !== "Deployment"
    );
    assertEquals(rbac.map((o) => o.kind), ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]);
    await cluster.kubectl(["apply", "-f", "-"], rbac.map((o) => JSON.stringify(o)).join("\n---\n"));
    await cluster.kubectl(["apply", "-f", `${REPO}deploy/rbac-for-official-chart.yaml`]);
    // What a pod of that ServiceAccount is: its token, in-cluster.
    const admin = await cluster.adminConnection();
    const asPod = {
      server: admin.server,
      caPem: admin.caPem,
      insecureSkipTlsVerify: false,
      token: (await cluster.kubectl(["-n", "kube-system", "create", "token", ACCOUNT, "--duration=1h"]))
        .trim(),
      source: "in-cluster",
    };
    const values = parseYaml(
      await Deno.readTextFile(`${REPO}tests/fixtures/installers/kube-hetzner.yaml`),
    ) as {
      args: Record<string, string>;
      networking: { clusterCIDR: string };
      env: Record<string, { value: string }>;
    };
    const args = officialArgs(values);
    assertEquals(args, [
      "--allow-untagged-cloud",
      "--cloud-provider=hcloud",
      "--route-reconciliation-period=30s",
      "--webhook-secure-port=0",
      "--allocate-node-cidrs=true",
      "--cluster-cidr=10.42.0.0/16",
      "--leader-elect=false",
    ]);
    // Its env: the values' `value:` entries, HCLOUD_NETWORK (networking.enabled), ROBOT_ENABLED
    // (robot.enabled) and the Robot credentials from the Secret `hcloud`; the endpoint is the simulator's.
    const env = {
      ...Object.fromEntries(Object.entries(values.env).map(([k, v]) => [k, v.value])),
      HCLOUD_NETWORK: "k8s",
      ROBOT_ENABLED: "true",
      ROBOT_USER: "robot-user",
      ROBOT_PASSWORD: "robot-password",
      ROBOT_ENDPOINT: sim.robotEndpoint,
    };
    seedScenario(sim, ["node-a"]);
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,service", ...args], env, asPod);
    try {
      await registerNode(client, "node-a");
      await eventually(async () => !!(await client.get(NODES, "node-a")).spec?.providerID, 30_000);
      await client.create(SERVICES, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: "default" },
        spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ name: "http", port: 80 }] },
      });
      await eventually(
        async () =>
          ((await client.get(SERVICES, "web", { namespace: "default" })).status?.loadBalancer?.ingress ?? [])
            .length > 0,
        30_000,
      );
      const lb = [...sim.world.loadBalancers.values()][0];
      assertEquals(lb.targets.map((t) => t.type), ["label_selector"], "the cluster identity is known");
      const lease = await client.get(LEASES, "cloud-controller-manager", { namespace: "kube-system" });
      assert(lease.spec?.holderIdentity, "the lease is taken although the chart turned leader election off");
      const answers = ccm.registry.counter("kube_api_requests_total", "");
      const denied = ["401", "403"].flatMap((code) =>
        ["get", "list", "watch", "create", "update", "patch", "delete"].map((verb) =>
          answers.get({ code, verb })
        )
      ).reduce((a, b) => a + b, 0);
      assertEquals(denied, 0, "no Forbidden answer");
    } finally {
      await close(ccm);
    }
  },
});
