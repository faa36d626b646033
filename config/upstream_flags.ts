/**
 * Flags of the upstream `k8s.io/cloud-provider` command (and the component-base logging and klog
 * flags it registers) that the official Hetzner CCM accepts and that have no meaning here: serving
 * options we do not offer (delegated authn/authz, webhooks, profiling), klog's verbosity and file
 * options, metric filters. Manifests written for the official CCM keep working: these are accepted,
 * their values ignored, and named in one info line at startup. Anything else unknown is an error.
 *
 * @module
 */

/** Ignored upstream flags that take no value (`--name` or `--name=true`). */
const BOOLEAN = [
  "add-dir-header",
  "alsologtostderr",
  "authentication-skip-lookup",
  "authentication-tolerate-lookup-failure",
  "contention-profiling",
  "enable-leader-migration",
  "log-json-split-stream",
  "log-text-split-stream",
  "logtostderr",
  "one-output",
  "permit-address-sharing",
  "permit-port-sharing",
  "profiling",
  "skip-headers",
  "skip-log-headers",
  "webhook-permit-address-sharing",
  "webhook-permit-port-sharing",
] as const;

/** Ignored upstream flags that take a value (`--name=value` or `--name value`). */
const VALUED = [
  "allow-metric-labels",
  "allow-metric-labels-manifest",
  "authentication-kubeconfig",
  "authentication-token-webhook-cache-ttl",
  "authorization-always-allow-paths",
  "authorization-kubeconfig",
  "authorization-webhook-cache-authorized-ttl",
  "authorization-webhook-cache-unauthorized-ttl",
  "cert-dir",
  "client-ca-file",
  "concurrent-node-status-updates",
  "controller-start-interval",
  "disabled-metrics",
  "external-cloud-volume-plugin",
  "http2-max-streams-per-connection",
  "kube-api-content-type",
  "leader-migration-config",
  "log-backtrace-at",
  "log-dir",
  "log-file",
  "log-file-max-size",
  "log-flush-frequency",
  "log-json-info-buffer-size",
  "log-text-info-buffer-size",
  "logging-format",
  "master",
  "min-resync-period",
  "node-sync-period",
  "requestheader-allowed-names",
  "requestheader-client-ca-file",
  "requestheader-extra-headers-prefix",
  "requestheader-group-headers",
  "requestheader-uid-headers",
  "requestheader-username-headers",
  "show-hidden-metrics-for-version",
  "stderrthreshold",
  "tls-cipher-suites",
  "tls-min-version",
  "tls-sni-cert-key",
  "v",
  "vmodule",
  "webhook-bind-address",
  "webhook-cert-dir",
  "webhook-http2-max-streams-per-connection",
  "webhook-tls-cert-file",
  "webhook-tls-cipher-suites",
  "webhook-tls-min-version",
  "webhook-tls-private-key-file",
  "webhook-tls-sni-cert-key",
  "webhooks",
] as const;

const BOOLEAN_SET: ReadonlySet<string> = new Set(BOOLEAN);
const VALUED_SET: ReadonlySet<string> = new Set(VALUED);

/** Whether `name` is an ignored upstream flag, and whether it takes a value. */
export function upstreamFlag(name: string): "boolean" | "valued" | undefined {
  return BOOLEAN_SET.has(name) ? "boolean" : VALUED_SET.has(name) ? "valued" : undefined;
}

/** Every ignored upstream flag name, for `--help`. */
export const UPSTREAM_FLAG_NAMES: readonly string[] = [...BOOLEAN, ...VALUED].sort();
