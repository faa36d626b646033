/**
 * One line of reference per environment variable: its default, what it does, and how it relates to
 * the official CCM (HCCM). A `Record` over {@link EnvVar}, so a variable added to the list without
 * its line does not compile; docs/reference/environment.md is generated from it
 * (`deno task manifests`) and a test fails when the page drifts.
 *
 * @module
 */
import type { EnvVar } from "./env.ts";

/** How a variable relates to the official CCM. */
export type HccmRelation = "same" | "ours" | "accepted" | "kubernetes" | "syself";

/** One variable's reference line. */
export interface EnvReference {
  /** The default, as the operator would write it; "" when unset means off or absent. */
  default: string;
  /** What it does, one or two sentences. */
  meaning: string;
  hccm: HccmRelation;
}

/** What each relation says in the reference. */
export const HCCM_RELATION: Record<HccmRelation, string> = {
  same: "same name and meaning as HCCM",
  ours: "deno-ccm only",
  accepted: "accepted as HCCM does, without effect here",
  kubernetes: "the Kubernetes client's",
  syself: "the Syself fork's name, read as an alias",
};

const LB = "balancers the CCM creates, unless a Service annotation says otherwise";

/** The reference, in {@link ENV_VARS} order. */
export const ENV_REFERENCE: Record<EnvVar, EnvReference> = {
  KUBECONFIG: { default: "", meaning: "Kubeconfig path when --kubeconfig is not given.", hccm: "kubernetes" },
  KUBERNETES_SERVICE_HOST: { default: "", meaning: "In-cluster apiserver address.", hccm: "kubernetes" },
  KUBERNETES_SERVICE_PORT: { default: "", meaning: "In-cluster apiserver port.", hccm: "kubernetes" },
  HOME: { default: "", meaning: "Where ~/.kube/config is looked for.", hccm: "kubernetes" },
  HCLOUD_TOKEN: {
    default: "",
    meaning: "API token of the Hetzner Cloud project (required, or _FILE).",
    hccm: "same",
  },
  HCLOUD_TOKEN_FILE: {
    default: "",
    meaning: "File holding the token; read again every 10 s and after a 401 (rotation without restart).",
    hccm: "same",
  },
  HCLOUD_ENDPOINT: { default: "https://api.hetzner.cloud/v1", meaning: "Cloud API URL.", hccm: "same" },
  HCLOUD_DEBUG: {
    default: "false",
    meaning: "Requests are logged at --log-level=debug instead.",
    hccm: "accepted",
  },
  HCLOUD_NETWORK: {
    default: "",
    meaning: "Network (name or ID) for private IPs, routes and private load balancer targets.",
    hccm: "same",
  },
  HCLOUD_NETWORK_ROUTES_ENABLED: {
    default: "true",
    meaning: "Route pod CIDRs through the network.",
    hccm: "same",
  },
  HCLOUD_NETWORK_DISABLE_ATTACHED_CHECK: {
    default: "false",
    meaning: "There is no attached-network check to disable.",
    hccm: "accepted",
  },
  HCLOUD_INSTANCES_ADDRESS_FAMILY: {
    default: "ipv4",
    meaning: "Node addresses: ipv4, ipv6 or dualstack.",
    hccm: "same",
  },
  HCLOUD_INSTANCES_ZONE_LABEL_ENABLED: {
    default: "true",
    meaning: "Set the zone label (topology.kubernetes.io/zone) on Nodes.",
    hccm: "same",
  },
  HCLOUD_INSTANCES_TOPOLOGY: {
    default: "legacy",
    meaning: "legacy: zone = the old datacenter name, region = the location (the official CCM's); " +
      "location: zone = the location, region = its network zone. Set on new Nodes only.",
    hccm: "ours",
  },
  HCLOUD_INSTANCES_NODE_NAME_SUFFIX: {
    default: "",
    meaning: "A Node named <server><suffix> matches <server> when no server has its full name.",
    hccm: "ours",
  },
  HCLOUD_INSTANCES_SERVER_LABELS: {
    default: "",
    meaning: "Server label keys (or prefix*) kept in step as Node labels under the label prefix.",
    hccm: "ours",
  },
  HCLOUD_INSTANCES_SERVER_LABEL_PREFIX: {
    default: "server.hetzner.cloud",
    meaning: "Prefix of the Node labels and taints copied from server labels.",
    hccm: "ours",
  },
  HCLOUD_INSTANCES_SERVER_TAINTS: {
    default: "",
    meaning: "Server label keys (key[:Effect]) kept in step as Node taints under the label prefix.",
    hccm: "ours",
  },
  HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS: {
    default: "",
    meaning: "Server label keys (key[:Effect]) set as Node taints once, when the Node is initialized; " +
      "never put back after they are lifted.",
    hccm: "ours",
  },
  HCLOUD_SERVER_CACHE_MODE: {
    default: "all",
    meaning: "Lookups always share one server list.",
    hccm: "accepted",
  },
  HCLOUD_SERVER_CACHE_MAX_AGE: {
    default: "10s",
    meaning: "How long one server list serves lookups.",
    hccm: "same",
  },
  HCLOUD_SERVER_REFRESH: {
    default: "actions",
    meaning:
      "actions: follow the action logs and re-read only the servers they name; list: list all each time.",
    hccm: "ours",
  },
  HCLOUD_SERVER_FULL_LIST_PERIOD: {
    default: "24h; 1h with HCLOUD_INSTANCES_SERVER_LABELS or _TAINTS",
    meaning: "Longest time between full server lists with HCLOUD_SERVER_REFRESH=actions (server labels and " +
      "names are no actions: a label copied to Nodes needs the list; a rename shows in the Hostname address). " +
      "0 is refused: HCLOUD_SERVER_REFRESH=list lists at every refresh.",
    hccm: "ours",
  },
  HCLOUD_METRICS_ENABLED: {
    default: "true",
    meaning: "Serve /metrics on HCLOUD_METRICS_ADDRESS.",
    hccm: "same",
  },
  HCLOUD_METRICS_ADDRESS: { default: ":8233", meaning: "Address of that /metrics server.", hccm: "same" },
  HCLOUD_LOAD_BALANCERS_ENABLED: {
    default: "true",
    meaning: "Run the Service (load balancer) controller.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_LOCATION: { default: "", meaning: `Location of the ${LB}.`, hccm: "same" },
  HCLOUD_LOAD_BALANCERS_NETWORK_ZONE: {
    default: "",
    meaning: `Network zone of the ${LB} (not with _LOCATION).`,
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_TYPE: { default: "lb11", meaning: `Type of the ${LB}.`, hccm: "same" },
  HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE: {
    default: "round_robin",
    meaning: `Algorithm (round_robin or least_connections) of the ${LB}.`,
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_DISABLE_PRIVATE_INGRESS: {
    default: "false",
    meaning: "Leave the balancer's private IP out of the Service's ingress.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP: {
    default: "false",
    meaning: "Target Nodes by their private IP in HCLOUD_NETWORK.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_DISABLE_IPV6: {
    default: "false",
    meaning: "Leave the balancer's IPv6 out of the Service's ingress.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK: {
    default: "false",
    meaning: "Create balancers without a public interface.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_USES_PROXYPROTOCOL: {
    default: "false",
    meaning: "Send the PROXY protocol header to targets.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL: {
    default: "15s",
    meaning: "Health-check interval.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT: {
    default: "10s",
    meaning: "Health-check timeout.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: {
    default: "3",
    meaning: "Health-check retries.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_PRIVATE_SUBNET_IP_RANGE: {
    default: "",
    meaning: "Subnet (CIDR) of HCLOUD_NETWORK the balancers' private IPs come from.",
    hccm: "same",
  },
  HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES: {
    default: "*",
    meaning:
      "Namespaces whose Services may name cloud objects made outside the CCM without their consent label.",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_LABELS: {
    default: "",
    meaning: "key=value,… labels on every balancer and managed certificate created.",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS: {
    default: "false",
    meaning: "A leaving Node stays a target until the health check has failed it.",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_KUBE_PROXY_HEALTH_CHECK: {
    default: "false",
    meaning: "externalTrafficPolicy: Cluster balancers check kube-proxy's /healthz (port 10256).",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS: {
    default: "false",
    meaning:
      "Export balancer traffic (connections, requests, bandwidth): each drift repair pass reads up to " +
      "30 balancers, one request each (at most 180 an hour at the default 10-minute period).",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_INGRESS_FOLLOWS_IP_FAMILIES: {
    default: "false",
    meaning:
      "A Service's ingress lists only the balancer's addresses of its spec.ipFamilies, in that order " +
      "(the annotation service.deno-ccm.io/ingress-follows-ip-families decides per Service).",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_FIREWALL: {
    default: "",
    meaning:
      "Name of a Cloud Firewall whose rules for this cluster's balancers (their public IPv4 to the ports " +
      "they send to) the CCM keeps; created when missing, applied by the operator, never by the CCM; other rules " +
      "are kept.",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: {
    default: "",
    meaning:
      "Namespaces (comma-separated, or *) whose NodePort Services may open their NodePorts in that firewall " +
      "with service.deno-ccm.io/firewall-open-nodeports, from service.deno-ccm.io/firewall-source-ranges or everywhere.",
    hccm: "ours",
  },
  HCLOUD_LOAD_BALANCERS_TLS_SECRETS: {
    default: "false",
    meaning:
      "Services may name labelled kubernetes.io/tls Secrets whose certificate is uploaded and renewed.",
    hccm: "ours",
  },
  ROBOT_ENABLED: {
    default: "false",
    meaning:
      "Robot (dedicated) servers next to Cloud servers. Unset, with no ROBOT_* credential variable and both credentials in the Syself chart's mount (/etc/hetzner-secret): on, as that chart's CCM.",
    hccm: "same",
  },
  ROBOT_USER: { default: "", meaning: "Robot webservice user.", hccm: "same" },
  ROBOT_USER_NAME: { default: "", meaning: "ROBOT_USER under the Syself chart's name.", hccm: "syself" },
  ROBOT_USER_FILE: { default: "", meaning: "File holding ROBOT_USER.", hccm: "same" },
  ROBOT_PASSWORD: { default: "", meaning: "Robot webservice password.", hccm: "same" },
  ROBOT_PASSWORD_FILE: { default: "", meaning: "File holding ROBOT_PASSWORD.", hccm: "same" },
  ROBOT_CACHE_TIMEOUT: {
    default: "5m",
    meaning: "How long one Robot server list serves every lookup.",
    hccm: "same",
  },
  ROBOT_RATE_LIMIT_WAIT_TIME: {
    default: "5m",
    meaning: "No Robot call for this long after Robot's rate limit answered (HCCM's default: 0).",
    hccm: "same",
  },
  ROBOT_FORWARD_INTERNAL_IPS: {
    default: "true",
    meaning: "Keep the kubelet's InternalIPs on Robot Nodes.",
    hccm: "same",
  },
  ROBOT_ENDPOINT: {
    default: "https://robot-ws.your-server.de",
    meaning: "Robot webservice URL.",
    hccm: "ours",
  },
  HCLOUD_USE_HROBOT_PROVIDER_ID_FOR_BAREMETAL: {
    default: "true",
    meaning:
      "false: new Robot Nodes get hcloud://bm-<number> (Cluster API Provider Hetzner's form). Default false when Robot is on by the Syself chart's mount.",
    hccm: "syself",
  },
  DENO_CCM_ENV_NAMES: {
    default: "",
    meaning:
      "The names the chart's `env:` sets (the chart sets it): a name the CCM does not read is named at start.",
    hccm: "ours",
  },
};

/** docs/reference/environment.md, from {@link ENV_REFERENCE}. */
export function environmentPage(order: readonly EnvVar[]): string {
  const cell = (text: string) => text.replaceAll("|", "\\|");
  const rows = order.map((name) => {
    const r = ENV_REFERENCE[name];
    return `| \`${name}\` | ${r.default ? `\`${cell(r.default)}\`` : ""} | ${cell(r.meaning)} | ${
      HCCM_RELATION[r.hccm]
    } |`;
  });
  return [
    "# Environment variables",
    "",
    "Generated from `config/env_reference.ts` by `deno task manifests`; edit that table, not this page.",
    "Only the operator sets these (tenants write Services and Secrets, never the CCM's environment).",
    "Booleans and durations use Go's syntax (`true`, `1`, `10s`, `1m30s`).",
    "",
    "| Variable | Default | What it does | Relation to the official CCM |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}
