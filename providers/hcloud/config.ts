/**
 * The hcloud provider's configuration: the official Hetzner CCM's environment variables, with the
 * same names, defaults and parsing (Go `ParseBool`, Go durations), every problem collected.
 *
 * @module
 */
import { quoteValue } from "../../lib/quote_value.ts";
import { readSecretFile } from "../../lib/secret_file.ts";
import { parseDuration } from "../../lib/duration.ts";
import { parseGoBool } from "../../lib/go_bool.ts";
import { parseCidr } from "../../lib/cidr.ts";
import type { EnvVar } from "../../config/env.ts";
import {
  DEFAULT_SERVER_LABEL_PREFIX,
  invalidServerLabelPattern,
  parseServerTaintPatterns,
  type ServerTaintPattern,
} from "./instances/mod.ts";
import {
  readRobotConfig,
  type RobotConfig,
  SYSELF_SECRET_DIR,
  SYSELF_SETTING,
  syselfFile,
} from "./robot/mod.ts";
import { tokenFormatProblem } from "../../hcloud_api/mod.ts";
import { type LoadBalancerDefaults, parseUserLabels } from "./load_balancers/mod.ts";
import type { AddressFamily } from "./instances/mod.ts";

export type { AddressFamily, LoadBalancerDefaults };

/** Everything the hcloud provider reads from the environment. */
export interface HcloudConfig {
  /** `HCLOUD_TOKEN` (or the file's content): never logged. */
  token: string;
  /** `HCLOUD_ENDPOINT`: the Cloud API's base URL. */
  endpoint: string;
  /** Network name or ID (`HCLOUD_NETWORK`). */
  network?: string;
  /** The token came from HCLOUD_TOKEN_FILE (for messages; never the token itself). */
  tokenFromFile?: boolean;
  /** `HCLOUD_TOKEN_FILE` when the token comes from it: read again while running (rotation). */
  tokenFile?: string;
  /** `HCLOUD_NETWORK_ROUTES_ENABLED`: routes in the Network for pod ranges. */
  networkRoutesEnabled: boolean;
  /** `HCLOUD_INSTANCES_ADDRESS_FAMILY`: which public addresses Nodes get. */
  addressFamily: AddressFamily;
  /** `HCLOUD_INSTANCES_ZONE_LABEL_ENABLED`: Nodes get the zone label. */
  zoneLabelEnabled: boolean;
  /**
   * `HCLOUD_INSTANCES_TOPOLOGY` (ours): `legacy` (the official CCM's: zone = the old datacenter name,
   * region = the location) or `location` (zone = the location, region = its network zone).
   */
  topology: "legacy" | "location";
  /**
   * `HCLOUD_INSTANCES_NODE_NAME_SUFFIX` (ours): a domain such as `.example.com`; a Node named
   * `web-1.example.com` then matches the server `web-1` when no server has the Node's full name.
   */
  nodeNameSuffix?: string;
  /** `HCLOUD_INSTANCES_SERVER_LABELS` (ours): server label keys (or `prefix*`) copied to Nodes. */
  serverLabels?: string[];
  /** `HCLOUD_INSTANCES_SERVER_LABEL_PREFIX` (ours): the Node-label prefix of copied server labels. */
  serverLabelPrefix: string;
  /**
   * `HCLOUD_INSTANCES_SERVER_TAINTS` (ours): server label keys (or `prefix*`), each with the effect
   * of the Node taint it becomes (`key:NoExecute`; default `NoSchedule`).
   */
  serverTaints?: ServerTaintPattern[];
  /**
   * `HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS` (ours): as `serverTaints`, but set once when the Node is
   * initialized and never put back after an agent removed them.
   */
  serverStartupTaints?: ServerTaintPattern[];
  /** `HCLOUD_SERVER_CACHE_MAX_AGE`: how old the server list may be for a lookup. */
  serverCacheMaxAgeMs: number;
  /** `HCLOUD_SERVER_REFRESH`: `actions` (follow the action logs) or `list` (full list every time). */
  serverRefresh: "actions" | "list";
  /**
   * `HCLOUD_SERVER_FULL_LIST_PERIOD`: the longest time between full lists in mode `actions` (1 hour
   * when server labels or taints are copied to Nodes, else 24 hours).
   */
  serverFullListPeriodMs: number;
  /** `HCLOUD_METRICS_ENABLED`: the metrics endpoint is served. */
  metricsEnabled: boolean;
  /** `HCLOUD_METRICS_ADDRESS`: where it listens. */
  metricsAddress: string;
  /** `HCLOUD_LOAD_BALANCERS_*`: the defaults of every balancer. */
  loadBalancers: LoadBalancerDefaults;
  /** `ROBOT_*`: dedicated root servers. */
  robot: RobotConfig;
}

/** The public API endpoint. */
export const DEFAULT_ENDPOINT = "https://api.hetzner.cloud/v1";

/**
 * Reads the config; returns every problem (each naming the variable and value) instead of throwing.
 * `config` is only usable when `errors` is empty.
 */
export async function readHcloudConfig(
  env: Record<string, string | undefined>,
  syselfDir = SYSELF_SECRET_DIR,
): Promise<{ config: HcloudConfig; errors: string[]; warnings: string[] }> {
  const errors: string[] = [];
  const warnings: string[] = [];
  const str = (name: EnvVar) => {
    const v = env[name];
    return v === undefined || v === "" ? undefined : v;
  };
  const bool = (name: EnvVar, fallback: boolean): boolean => optBool(name) ?? fallback;
  const optBool = (name: EnvVar): boolean | undefined => {
    const v = str(name);
    if (v === undefined) return undefined;
    const parsed = parseGoBool(v);
    if (parsed !== undefined) return parsed;
    errors.push(`${name}: "${v}" is not a boolean (true or false)`);
    return undefined;
  };
  const duration = (name: EnvVar): number | undefined => {
    const v = str(name);
    if (v === undefined) return undefined;
    const ms = parseDuration(v);
    if (ms === undefined) errors.push(`${name}: "${v}" is not a duration like "10s" or "1m"`);
    return ms;
  };
  const int = (name: EnvVar): number | undefined => {
    const v = str(name);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) errors.push(`${name}: "${v}" is not a non-negative integer`);
    return Number(v);
  };

  // Surrounding whitespace (a Secret written from a file ends in a newline) is not part of the token.
  let token = str("HCLOUD_TOKEN")?.trim() || undefined;
  // Neither variable: the Syself chart's mounted Secret (key `hcloud`), when there is one.
  const tokenFile = str("HCLOUD_TOKEN_FILE") ?? (token ? undefined : await syselfFile(syselfDir, "hcloud"));
  // An operator who set neither variable must learn where the token was looked for.
  const fileSetting = str("HCLOUD_TOKEN_FILE") ? "HCLOUD_TOKEN_FILE" : SYSELF_SETTING("HCLOUD_TOKEN");
  if (tokenFile) {
    try {
      const fromFile = (await readSecretFile(tokenFile)).trim();
      // Both set and different: which one was meant cannot be known (the official CCM takes HCLOUD_TOKEN).
      if (token && fromFile !== token) {
        errors.push(
          `HCLOUD_TOKEN and HCLOUD_TOKEN_FILE (${tokenFile}) are both set and differ: set only one of them`,
        );
      }
      token ||= fromFile;
      // An empty file is no token: say so, rather than let the API's 401 hide the cause.
      if (!token) errors.push(`${fileSetting}: ${tokenFile} is empty; it must hold the API token`);
    } catch (err) {
      if (!token) errors.push(`${fileSetting}: cannot read ${tokenFile}: ${(err as Error).message}`);
      else warnings.push(`HCLOUD_TOKEN_FILE: cannot read ${tokenFile}; using HCLOUD_TOKEN`);
    }
  }
  const malformed = token ? tokenFormatProblem(token) : undefined;
  if (!token && !tokenFile) errors.push("HCLOUD_TOKEN (or HCLOUD_TOKEN_FILE) is required");
  else if (malformed) {
    // Sent as is, it would fail every request and end up quoted in header errors: refuse it now.
    errors.push(
      `${
        str("HCLOUD_TOKEN") ? "HCLOUD_TOKEN" : `HCLOUD_TOKEN_FILE (${tokenFile})`
      }: not a token: ${malformed}`,
    );
  } else if (token !== undefined && token.length !== 64) {
    warnings.push("unrecognized token format, expected 64 characters");
  }

  const endpoint = (str("HCLOUD_ENDPOINT") ?? DEFAULT_ENDPOINT).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(endpoint)) errors.push(`HCLOUD_ENDPOINT: "${endpoint}" is not an http(s) URL`);

  const refresh = str("HCLOUD_SERVER_REFRESH") ?? "actions";
  if (refresh !== "actions" && refresh !== "list") {
    errors.push(`HCLOUD_SERVER_REFRESH: "${refresh}" is not one of actions, list`);
  }
  const family = str("HCLOUD_INSTANCES_ADDRESS_FAMILY") ?? "ipv4";
  const serverLabels = str("HCLOUD_INSTANCES_SERVER_LABELS")?.split(",").map((p) => p.trim()).filter(Boolean);
  const badPattern = serverLabels && invalidServerLabelPattern(serverLabels);
  if (badPattern !== undefined) {
    errors.push(
      `HCLOUD_INSTANCES_SERVER_LABELS: "${badPattern}" is not a label key (or a key prefix ending in *)`,
    );
  }
  const serverTaints = parseServerTaintPatterns(str("HCLOUD_INSTANCES_SERVER_TAINTS"), errors);
  const serverStartupTaints = parseServerTaintPatterns(
    str("HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS"),
    errors,
    "HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS",
  );
  const serverLabelPrefix = str("HCLOUD_INSTANCES_SERVER_LABEL_PREFIX") ?? DEFAULT_SERVER_LABEL_PREFIX;
  if (
    !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(serverLabelPrefix) ||
    serverLabelPrefix.length > 253 || /(^|\.)(kubernetes|k8s)\.io$/.test(serverLabelPrefix)
  ) {
    errors.push(
      `HCLOUD_INSTANCES_SERVER_LABEL_PREFIX: "${serverLabelPrefix}" is not a DNS subdomain outside kubernetes.io/k8s.io`,
    );
  }
  const nodeNameSuffix = str("HCLOUD_INSTANCES_NODE_NAME_SUFFIX");
  if (nodeNameSuffix !== undefined && !/^\.[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(nodeNameSuffix)) {
    errors.push(
      `HCLOUD_INSTANCES_NODE_NAME_SUFFIX: "${nodeNameSuffix}" is not a domain suffix such as ".example.com"`,
    );
  }
  const topology = str("HCLOUD_INSTANCES_TOPOLOGY") ?? "legacy";
  if (!["legacy", "location"].includes(topology)) {
    errors.push(`HCLOUD_INSTANCES_TOPOLOGY: "${topology}" is not one of legacy, location`);
  }
  if (!["ipv4", "ipv6", "dualstack"].includes(family)) {
    errors.push(`HCLOUD_INSTANCES_ADDRESS_FAMILY: "${family}" is not one of ipv4, ipv6, dualstack`);
  }
  const cacheMode = str("HCLOUD_SERVER_CACHE_MODE");
  if (cacheMode !== undefined && !["all", "one", "off"].includes(cacheMode)) {
    errors.push(`HCLOUD_SERVER_CACHE_MODE: "${cacheMode}" is not one of all, one, off`);
  } else if (cacheMode && cacheMode !== "all") {
    warnings.push(
      `HCLOUD_SERVER_CACHE_MODE=${cacheMode} is accepted but deno-ccm always serves lookups from one list`,
    );
  }
  const network = str("HCLOUD_NETWORK");
  const metricsAddress = str("HCLOUD_METRICS_ADDRESS") ?? ":8233";
  if (!/^(.*):(\d{1,5})$/.test(metricsAddress)) {
    errors.push(`HCLOUD_METRICS_ADDRESS: "${metricsAddress}" is not host:port`);
  }

  const lbPrefix = "HCLOUD_LOAD_BALANCERS_";
  const location = str(`${lbPrefix}LOCATION`);
  const networkZone = str(`${lbPrefix}NETWORK_ZONE`);
  if (location && networkZone) {
    errors.push(
      `${lbPrefix}LOCATION and ${lbPrefix}NETWORK_ZONE are mutually exclusive (got "${location}" and "${networkZone}")`,
    );
  }
  const lbType = str(`${lbPrefix}TYPE`);
  const names = [["LOCATION", location, "location"], ["NETWORK_ZONE", networkZone, "zone"], [
    "TYPE",
    lbType,
    "load balancer type",
  ]] as const;
  // The annotations' own rule for these names: a value they could never hold is refused at start.
  for (const [name, v, what] of names) {
    if (v !== undefined && !/^[a-z0-9-]+$/.test(v)) {
      errors.push(`${lbPrefix}${name}: ${quoteValue(v)} is not a ${what} name`);
    }
  }
  const algorithm = str(`${lbPrefix}ALGORITHM_TYPE`)?.toLowerCase();
  if (algorithm !== undefined && algorithm !== "round_robin" && algorithm !== "least_connections") {
    errors.push(`${lbPrefix}ALGORITHM_TYPE: "${algorithm}" is not one of round_robin, least_connections`);
  }
  // Unset means every namespace, as the official CCM; "" means none.
  const externalRaw = env[`${lbPrefix}EXTERNAL_OBJECTS_NAMESPACES` as EnvVar];
  const external = externalRaw === undefined || externalRaw.trim() === "*"
    ? "*" as const
    : externalRaw.split(",").map((n) => n.trim()).filter(Boolean);
  for (const n of external === "*" ? [] : external) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(n)) {
      errors.push(`${lbPrefix}EXTERNAL_OBJECTS_NAMESPACES: "${n.slice(0, 64)}" is not a namespace name`);
    }
  }
  const userLabels = parseUserLabels(env[`${lbPrefix}LABELS` as EnvVar], `${lbPrefix}LABELS`);
  errors.push(...userLabels.errors);
  const subnet = str(`${lbPrefix}PRIVATE_SUBNET_IP_RANGE`);
  // A firewall's name: at most 128 characters (the API's limit).
  const firewallName = str(`${lbPrefix}FIREWALL`);
  if (firewallName !== undefined && (firewallName.length > 128 || [...firewallName].some((c) => c < " "))) {
    errors.push(
      `${lbPrefix}FIREWALL: "${firewallName.slice(0, 64)}" is not a firewall name (at most 128 characters)`,
    );
  }
  // Which namespaces' NodePort Services may open their NodePorts in the firewall: none unless named.
  const nodePortRaw = str(`${lbPrefix}FIREWALL_NODEPORT_NAMESPACES`);
  const nodePortNamespaces = nodePortRaw === undefined
    ? undefined
    : nodePortRaw.trim() === "*"
    ? "*" as const
    : nodePortRaw.split(",").map((n) => n.trim()).filter(Boolean);
  for (const n of nodePortNamespaces === "*" ? [] : nodePortNamespaces ?? []) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(n)) {
      errors.push(`${lbPrefix}FIREWALL_NODEPORT_NAMESPACES: ${quoteValue(n)} is not a namespace name`);
    }
  }
  if (nodePortNamespaces !== undefined && firewallName === undefined) {
    errors.push(
      `${lbPrefix}FIREWALL_NODEPORT_NAMESPACES needs ${lbPrefix}FIREWALL: the NodePorts are opened in that firewall`,
    );
  }
  if (subnet !== undefined && !parseCidr(subnet)) {
    errors.push(`${lbPrefix}PRIVATE_SUBNET_IP_RANGE: "${subnet}" is not a CIDR range`);
  }

  const robot = await readRobotConfig(env, errors, bool, syselfDir);
  // Accepted and checked as the official CCM does, without effect here (docs/guides/nodes.md says why):
  // request logging is --log-level=debug; there is no attached-network check to disable.
  bool("HCLOUD_DEBUG", false);
  bool("HCLOUD_NETWORK_DISABLE_ATTACHED_CHECK", false);
  const config: HcloudConfig = {
    token: token ?? "",
    endpoint,
    network,
    tokenFromFile: !str("HCLOUD_TOKEN") && !!tokenFile,
    tokenFile: !str("HCLOUD_TOKEN") && tokenFile ? tokenFile : undefined,
    networkRoutesEnabled: network ? bool("HCLOUD_NETWORK_ROUTES_ENABLED", true) : false,
    addressFamily: family as AddressFamily,
    zoneLabelEnabled: bool("HCLOUD_INSTANCES_ZONE_LABEL_ENABLED", true),
    topology: topology as HcloudConfig["topology"],
    nodeNameSuffix,
    serverLabels: serverLabels?.length ? serverLabels : undefined,
    serverLabelPrefix,
    serverTaints,
    serverStartupTaints,
    serverCacheMaxAgeMs: duration("HCLOUD_SERVER_CACHE_MAX_AGE") ?? 10_000,
    serverRefresh: refresh as HcloudConfig["serverRefresh"],
    // Labels are no actions: copying them to Nodes needs a list each hour. Without that, nothing
    // the CCM reads of servers changes unrecorded but names (and a rename only shows in the Node's
    // Hostname address): a daily list is the backstop, and it no longer grows the hourly cost with
    // the project (20 requests an hour at 1000 servers, 100 at 5000).
    serverFullListPeriodMs: duration("HCLOUD_SERVER_FULL_LIST_PERIOD") ??
      (serverLabels?.length || serverTaints?.length ? 3_600_000 : 86_400_000),
    metricsEnabled: bool("HCLOUD_METRICS_ENABLED", true),
    metricsAddress,
    loadBalancers: {
      enabled: bool(`${lbPrefix}ENABLED`, true),
      location,
      networkZone,
      type: lbType,
      algorithmType: algorithm as LoadBalancerDefaults["algorithmType"],
      disablePrivateIngress: bool(`${lbPrefix}DISABLE_PRIVATE_INGRESS`, false),
      usePrivateIp: bool(`${lbPrefix}USE_PRIVATE_IP`, false),
      disableIpv6: bool(`${lbPrefix}DISABLE_IPV6`, false),
      disablePublicNetwork: optBool(`${lbPrefix}DISABLE_PUBLIC_NETWORK`),
      usesProxyProtocol: optBool(`${lbPrefix}USES_PROXYPROTOCOL`),
      healthCheckIntervalMs: duration(`${lbPrefix}HEALTH_CHECK_INTERVAL`),
      healthCheckTimeoutMs: duration(`${lbPrefix}HEALTH_CHECK_TIMEOUT`),
      healthCheckRetries: int(`${lbPrefix}HEALTH_CHECK_RETRIES`),
      privateSubnetIpRange: subnet,
      externalObjectsNamespaces: external,
      labels: userLabels.labels,
      drainTargets: bool(`${lbPrefix}DRAIN_TARGETS`, false),
      kubeProxyHealthCheck: bool(`${lbPrefix}KUBE_PROXY_HEALTH_CHECK`, false),
      trafficMetrics: bool(`${lbPrefix}TRAFFIC_METRICS`, false),
      ingressFollowsIpFamilies: bool(`${lbPrefix}INGRESS_FOLLOWS_IP_FAMILIES`, false),
      firewall: firewallName,
      firewallNodePortNamespaces: nodePortNamespaces,
      tlsSecrets: bool(`${lbPrefix}TLS_SECRETS`, false),
    },
    robot,
  };
  // 0 would turn every incremental refresh into a full list without saying so: that is the `list`
  // design, which has its own setting. A short period costs at most what `list` costs (a full list
  // only ever replaces a refresh that was due anyway).
  if (config.serverFullListPeriodMs === 0) {
    errors.push(
      'HCLOUD_SERVER_FULL_LIST_PERIOD: "0" lists every server at every refresh; set HCLOUD_SERVER_REFRESH=list ' +
        "for that, or give a period (24h by default)",
    );
  }
  if (config.loadBalancers.usePrivateIp && !config.network) {
    errors.push(
      `${lbPrefix}USE_PRIVATE_IP=true needs a network: set HCLOUD_NETWORK (private IPs live in a network)`,
    );
  }
  return { config, errors, warnings };
}
