/**
 * What `deno task dev` and `deno task demo` add to the local cluster so that it shows every feature:
 * the chart's admission policy (from deploy/ccm.yaml, as `kubectl apply -k deploy` installs it), and
 * the lines an operator needs next: kubectl against it, the simulator's token, and the opt-in features.
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import type { TestCluster } from "../testing/kube_cluster.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";

const DEPLOY = new URL("../deploy/ccm.yaml", import.meta.url);

/** The admission policy and its binding from deploy/ccm.yaml, applied to `cluster`; their names. */
export async function installAdmissionPolicy(cluster: TestCluster): Promise<string[]> {
  const objects = parseAllDocuments(await Deno.readTextFile(DEPLOY)).map((d) => d.toJS())
    .filter((o) => /^ValidatingAdmissionPolicy(Binding)?$/.test(o?.kind ?? ""));
  await cluster.kubectl(["apply", "-f", "-"], objects.map((o) => JSON.stringify(o)).join("\n---\n"));
  return objects.map((o) => `${o.kind} ${o.metadata.name}`);
}

/** The opt-in features, and how to turn each on for the local cluster. */
export const OPT_INS: [string, string][] = [
  ["TLS certificates from Secrets", "HCLOUD_LOAD_BALANCERS_TLS_SECRETS=true"],
  ["draining targets", "HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS=true"],
  ["kube-proxy health checks", "HCLOUD_LOAD_BALANCERS_KUBE_PROXY_HEALTH_CHECK=true"],
  ["ingress following the Service's IP families", "HCLOUD_LOAD_BALANCERS_INGRESS_FOLLOWS_IP_FAMILIES=true"],
  ["a Cloud Firewall following the balancers", "HCLOUD_LOAD_BALANCERS_FIREWALL=k8s-nodes"],
  ["Robot servers (the simulator's Robot webservice)", "ROBOT_ENABLED=true"],
  ["kubelet serving certificates", "deno task dev --controllers=*,csr-approver"],
];

/** The lines printed once the local cluster runs. */
export function localHints(cluster: TestCluster, simEndpoint: string): string[] {
  const kubectl = cluster.assets.kubectl ?? "kubectl";
  return [
    `kubectl:    ${kubectl} --kubeconfig=${cluster.kubeconfigPath} get nodes,services`,
    `simulator:  HCLOUD_ENDPOINT=${simEndpoint} HCLOUD_TOKEN=${DEFAULT_SIM_TOKEN} (the simulator's token; ` +
    "the hcloud CLI works with both)",
    "opt-in features (export before `deno task dev`; settings pass, credentials and endpoints do not):",
    ...OPT_INS.map(([what, how]) => `  ${what}: ${how}`),
  ];
}
