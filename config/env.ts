/**
 * The environment variables deno-ccm reads, in one list: the compiled binary's `--allow-env`
 * names exactly these (see `deno.json`), and nothing reads the whole environment.
 *
 * @module
 */

/** Every variable read, Kubernetes and Hetzner alike. */
export const ENV_VARS = [
  "KUBECONFIG",
  "KUBERNETES_SERVICE_HOST",
  "KUBERNETES_SERVICE_PORT",
  "HOME",
  "HCLOUD_TOKEN",
  "HCLOUD_TOKEN_FILE",
  "HCLOUD_ENDPOINT",
  "HCLOUD_DEBUG",
  "HCLOUD_NETWORK",
  "HCLOUD_NETWORK_ROUTES_ENABLED",
  "HCLOUD_NETWORK_DISABLE_ATTACHED_CHECK",
  "HCLOUD_INSTANCES_ADDRESS_FAMILY",
  "HCLOUD_INSTANCES_ZONE_LABEL_ENABLED",
  "HCLOUD_INSTANCES_NODE_NAME_SUFFIX",
  "HCLOUD_INSTANCES_SERVER_LABELS",
  "HCLOUD_INSTANCES_SERVER_LABEL_PREFIX",
  "HCLOUD_INSTANCES_SERVER_TAINTS",
  "HCLOUD_SERVER_CACHE_MODE",
  "HCLOUD_SERVER_CACHE_MAX_AGE",
  "HCLOUD_SERVER_REFRESH",
  "HCLOUD_SERVER_FULL_LIST_PERIOD",
  "HCLOUD_METRICS_ENABLED",
  "HCLOUD_METRICS_ADDRESS",
  "HCLOUD_LOAD_BALANCERS_ENABLED",
  "HCLOUD_LOAD_BALANCERS_LOCATION",
  "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE",
  "HCLOUD_LOAD_BALANCERS_TYPE",
  "HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE",
  "HCLOUD_LOAD_BALANCERS_DISABLE_PRIVATE_INGRESS",
  "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP",
  "HCLOUD_LOAD_BALANCERS_DISABLE_IPV6",
  "HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK",
  "HCLOUD_LOAD_BALANCERS_USES_PROXYPROTOCOL",
  "HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL",
  "HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT",
  "HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES",
  "HCLOUD_LOAD_BALANCERS_PRIVATE_SUBNET_IP_RANGE",
  "HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES",
  "HCLOUD_LOAD_BALANCERS_LABELS",
  "ROBOT_ENABLED",
  "ROBOT_USER",
  "ROBOT_USER_FILE",
  "ROBOT_PASSWORD",
  "ROBOT_PASSWORD_FILE",
  "ROBOT_CACHE_TIMEOUT",
  "ROBOT_RATE_LIMIT_WAIT_TIME",
  "ROBOT_FORWARD_INTERNAL_IPS",
  "ROBOT_ENDPOINT",
] as const;

/** One of {@link ENV_VARS}: configuration code names variables by this type, so one missing from the list does not compile. */
export type EnvVar = (typeof ENV_VARS)[number];

/** Reads exactly {@link ENV_VARS} (a variable we may not read counts as unset). */
export function readEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of ENV_VARS) {
    try {
      env[name] = Deno.env.get(name);
    } catch {
      env[name] = undefined;
    }
  }
  return env;
}
