/**
 * Command-line flags, named and defaulted like the upstream cloud-controller-manager. Parsing
 * collects every problem instead of stopping at the first.
 *
 * @module
 */
import { formatDuration, parseDuration } from "../lib/duration.ts";
import { parseCidr, parseIp } from "../lib/cidr.ts";
import { LOG_FORMATS, LOG_LEVELS } from "../lib/log.ts";
import { parseGoBool } from "../lib/go_bool.ts";
import { UPSTREAM_FLAG_NAMES, upstreamFlag } from "./upstream_flags.ts";
import { ENV_VARS } from "./env.ts";

type FlagType = "string" | "bool" | "int" | "float" | "duration" | "list";

interface FlagSpec {
  name: string;
  type: FlagType;
  default: string | number | boolean | readonly string[];
  help: string;
  choices?: readonly string[];
  /** Accepted for drop-in compatibility with upstream/official-CCM manifests, without effect. */
  ignored?: boolean;
}

/** Every flag, in `--help` order. Durations are in milliseconds. */
export const FLAGS = [
  {
    name: "kubeconfig",
    type: "string",
    default: "",
    help: "Path to a kubeconfig; empty: $KUBECONFIG, in-cluster, ~/.kube/config",
  },
  {
    name: "context",
    type: "string",
    default: "",
    help: "kubeconfig context to use instead of current-context",
  },
  {
    name: "cloud-provider",
    type: "string",
    default: "hcloud",
    help: "Cloud provider (hetzner: the name the Syself chart passes, the same provider)",
    choices: ["hcloud", "hetzner"],
  },
  {
    name: "controllers",
    type: "list",
    default: ["*"],
    help:
      "Controllers to run: * for all on by default, name to enable, -name to disable (cloud-node-controller, " +
      "cloud-node-lifecycle-controller, service-lb-controller, node-route-controller; aliases cloud-node, " +
      "cloud-node-lifecycle, service, route; off by default: kubelet-serving-csr-approver, alias csr-approver, " +
      "and node-ipam-controller, alias nodeipam)",
  },
  { name: "cluster-name", type: "string", default: "kubernetes", help: "Name of the cluster" },
  {
    name: "cluster-cidr",
    type: "string",
    default: "",
    help: "Pod CIDR range(s) of the cluster, comma-separated, primary family first (needed for routes and " +
      "node IPAM)",
  },
  {
    name: "configure-cloud-routes",
    type: "bool",
    default: true,
    help: "Create routes for pod CIDRs in the cloud network",
  },
  {
    name: "allocate-node-cidrs",
    type: "bool",
    default: false,
    help:
      "With the node-ipam-controller (off unless named in --controllers): give each Node its pod CIDRs. " +
      "Without that controller it has no effect (kube-controller-manager's allocator gives them, as with the " +
      "official CCM)",
  },
  {
    name: "cidr-allocator-type",
    type: "string",
    default: "CloudAllocator",
    help: "The node-ipam-controller's allocator: CloudAllocator (IPv4 from --cluster-cidr, IPv6 from each " +
      "server's /64) or RangeAllocator (both from --cluster-cidr, as kube-controller-manager)",
  },
  {
    name: "node-cidr-mask-size-ipv4",
    type: "int",
    default: 24,
    help: "Prefix length of each Node's IPv4 pod CIDR (node-ipam-controller)",
  },
  {
    name: "node-cidr-mask-size-ipv6",
    type: "int",
    default: 0,
    help: "Prefix length of each Node's IPv6 pod CIDR (node-ipam-controller); 0: 80 with CloudAllocator " +
      "(the second /80 of the server's /64), 64 with RangeAllocator",
  },
  {
    name: "load-balancer-class",
    type: "string",
    default: "",
    help: "Also handle Services whose spec.loadBalancerClass equals this",
  },
  {
    name: "load-balancer-class-exclusive",
    type: "bool",
    default: false,
    help: "Handle only Services of --load-balancer-class: new Services without a class are left to another " +
      "implementation (MetalLB, Cilium, kube-vip); those served before keep their balancers until they go",
  },
  {
    name: "node-monitor-period",
    type: "duration",
    default: 5_000,
    help: "How often the node lifecycle controller checks nodes",
  },
  {
    name: "node-deletion-max-percent",
    type: "int",
    default: 50,
    help: "Hold every Node deletion while the servers of more than this share of Nodes (and more than one) " +
      "vanish at once and the cloud does not show the Ready Nodes' servers either; 100 turns the check off",
  },
  {
    name: "drift-repair-period",
    type: "duration",
    default: 600_000,
    help: "How often this cluster's load balancers are listed (one paginated list) and changes made to " +
      "them outside the CCM reverted; 0 turns drift repair off",
  },
  {
    name: "node-status-update-frequency",
    type: "duration",
    default: 300_000,
    help: "How often node addresses are refreshed",
  },
  {
    name: "route-reconciliation-period",
    type: "duration",
    default: 10_000,
    help: "Period of the full route reconciliation",
  },
  {
    name: "concurrent-service-syncs",
    type: "int",
    default: 5,
    help: "Services reconciled in parallel (upstream: 1; see docs/explanation/performance.md)",
  },
  { name: "concurrent-node-syncs", type: "int", default: 1, help: "Nodes initialized in parallel" },
  {
    name: "kube-api-qps",
    type: "float",
    default: 100,
    help:
      "Client-side requests per second to the Kubernetes API (upstream: 20; see docs/explanation/performance.md)",
  },
  {
    name: "kube-api-burst",
    type: "int",
    default: 200,
    help: "Client-side burst to the Kubernetes API (upstream: 30)",
  },
  {
    name: "leader-elect",
    type: "bool",
    default: true,
    help: "Run leader election so only one replica is active (in a pod the lease is taken even when false: " +
      "two replicas never both act)",
  },
  {
    name: "leader-elect-lease-duration",
    type: "duration",
    default: 15_000,
    help: "How long a lease is valid without renewal",
  },
  {
    name: "leader-elect-renew-deadline",
    type: "duration",
    default: 10_000,
    help: "How long the leader retries renewal before stepping down",
  },
  {
    name: "leader-elect-retry-period",
    type: "duration",
    default: 2_000,
    help: "Wait between lease acquire/renew attempts",
  },
  {
    name: "leader-elect-resource-name",
    type: "string",
    default: "cloud-controller-manager",
    help: "Name of the Lease",
  },
  {
    name: "leader-elect-resource-namespace",
    type: "string",
    default: "kube-system",
    help: "Namespace of the Lease",
  },
  {
    name: "leader-elect-resource-lock",
    type: "string",
    default: "leases",
    help: "Lock type",
    choices: ["leases"],
  },
  {
    name: "kubelet-serving-csr-deny",
    type: "bool",
    default: true,
    help: "With the kubelet-serving-csr-approver controller: deny a kubelet serving CSR that fails a check " +
      "(false: leave it pending for another approver, with a Warning event)",
  },
  {
    name: "other-ccm-images",
    type: "list",
    default: ["hcloud-cloud-controller-manager", "hetzner-cloud-controller-manager"],
    help:
      "Stand by while a ReplicaSet or DaemonSet in --other-ccm-namespace runs or asks for a pod with an " +
      "image of one of these names (any registry, tag or digest): another cloud-controller-manager acting " +
      "beside this one would undo its work; empty turns the check off",
  },
  {
    name: "other-ccm-namespace",
    type: "string",
    default: "kube-system",
    help: "Namespace watched for another cloud-controller-manager (--other-ccm-images)",
  },
  {
    name: "bind-address",
    type: "string",
    default: "0.0.0.0",
    help: "Address of the health and metrics server",
  },
  {
    name: "secure-port",
    type: "int",
    default: 10258,
    help: "Port of the health and metrics server (/healthz, /readyz, /metrics); 0 disables it",
  },
  {
    name: "tls-cert-file",
    type: "string",
    default: "",
    help: "Serve HTTPS with this certificate (PEM); plain HTTP when empty",
  },
  {
    name: "tls-private-key-file",
    type: "string",
    default: "",
    help: "Private key (PEM) for --tls-cert-file",
  },
  { name: "log-level", type: "string", default: "info", help: "Lowest level logged", choices: LOG_LEVELS },
  {
    name: "log-format",
    type: "string",
    default: "text",
    help: "Log as human text or JSON lines",
    choices: LOG_FORMATS,
  },
  {
    name: "allow-untagged-cloud",
    type: "bool",
    default: false,
    help: "Accepted for compatibility",
    ignored: true,
  },
  {
    name: "webhook-secure-port",
    type: "int",
    default: 0,
    help: "Accepted for compatibility (no webhooks are served)",
    ignored: true,
  },
  {
    name: "feature-gates",
    type: "string",
    default: "",
    help: "Accepted for compatibility; routes are always watch-based",
    ignored: true,
  },
  {
    name: "use-hrobot-provider-id-for-baremetal",
    type: "bool",
    default: true,
    help:
      "Robot Nodes get provider ID hrobot://<number> (false: hcloud://bm-<number>, the form Cluster API " +
      "Provider Hetzner matches; env HCLOUD_USE_HROBOT_PROVIDER_ID_FOR_BAREMETAL)",
  },
  {
    name: "use-service-account-credentials",
    type: "bool",
    default: false,
    help: "Accepted for compatibility",
    ignored: true,
  },
  {
    name: "cloud-config",
    type: "string",
    default: "",
    help: "Accepted for compatibility; configuration comes from HCLOUD_* variables",
    ignored: true,
  },
  { name: "help", type: "bool", default: false, help: "Show this help" },
  { name: "version", type: "bool", default: false, help: "Print the version and exit" },
  {
    name: "residue",
    type: "string",
    default: "",
    help:
      "The way back: list what this cluster's deno-ccm left in the cloud project (list), or remove what " +
      "only marks or duplicates (remove; refused while deno-ccm runs), then exit",
    choices: ["", "list", "remove"],
  },
] as const satisfies readonly FlagSpec[];

/** `kube-api-qps` → `kubeApiQps`. */
export type Camel<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : S;
/** A flag's parsed value: one of its choices, or what its type parses to. */
export type FlagValue<F extends { type: string }> = F extends { choices: readonly (infer C extends string)[] }
  ? C
  : F["type"] extends "bool" ? boolean
  : F["type"] extends "int" | "float" | "duration" ? number
  : F["type"] extends "list" ? string[]
  : string;
/** The flags that take effect (the others are accepted for compatibility only). */
export type EffectiveFlag = Exclude<(typeof FLAGS)[number], { ignored: true }>;

/** Parsed flags, derived from {@link FLAGS}: camel-cased names. Durations are milliseconds. */
export type Flags = { -readonly [F in EffectiveFlag as Camel<F["name"]>]: FlagValue<F> };

const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Parses `argv`. Accepts `--flag=value`, `--flag value`, `-flag` and bare `--bool`. */
export function parseFlags(argv: string[]): { flags: Flags; errors: string[]; ignored: string[] } {
  const values: Record<string, unknown> = {};
  // Flags accepted only for compatibility are checked but kept out of `Flags`.
  const effective = (spec: FlagSpec) => !spec.ignored;
  for (const spec of FLAGS) {
    if (effective(spec)) {
      values[camel(spec.name)] = Array.isArray(spec.default) ? [...spec.default] : spec.default;
    }
  }
  const errors: string[] = [];
  /** Upstream flags accepted without effect, as given (for one info line). */
  const ignored: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = arg.match(/^--?([a-z0-9][a-z0-9-]*)(?:=(.*))?$/s);
    if (!m) {
      errors.push(`unexpected argument "${arg}" (flags look like --name=value)`);
      continue;
    }
    const [, name, inline] = m;
    const spec = FLAGS.find((f) => f.name === name) ??
      (name === "h" ? FLAGS.find((f) => f.name === "help") : undefined);
    if (!spec) {
      const upstream = upstreamFlag(name);
      if (!upstream) {
        errors.push(`unknown flag --${name}`);
        continue;
      }
      if (upstream === "valued" && inline === undefined) {
        if (i + 1 >= argv.length) {
          errors.push(`--${name} needs a value`);
          continue;
        }
        ignored.push(`--${name}=${argv[++i]}`);
      } else ignored.push(arg);
      continue;
    }
    let text = inline;
    if (text === undefined) {
      if (spec.type === "bool") text = "true";
      else if (i + 1 < argv.length) text = argv[++i];
      else {
        errors.push(`--${name} needs a value`);
        continue;
      }
    }
    const parsed = convert(spec, text);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) errors.push(String(parsed.error));
    else if (effective(spec)) values[camel(spec.name)] = parsed;
  }
  const flags = values as unknown as Flags;
  errors.push(...validate(flags));
  return { flags, errors, ignored };
}

function convert(spec: FlagSpec, text: string): unknown {
  const bad = (what: string) => ({ error: `--${spec.name}: "${text}" is not ${what}` });
  switch (spec.type) {
    case "string":
      if (spec.choices && !spec.choices.includes(text)) return bad(`one of ${spec.choices.join(", ")}`);
      return text;
    case "bool":
      // Go's strconv.ParseBool, as pflag reads it.
      return parseGoBool(text) ?? bad("a boolean (true or false)");
    case "int":
      return /^-?\d+$/.test(text) ? Number(text) : bad("an integer");
    case "float":
      return /^-?(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : bad("a number");
    case "duration": {
      const ms = parseDuration(text);
      return ms === undefined ? bad('a duration like "5s", "1m30s" or "500ms"') : ms;
    }
    case "list":
      return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  }
}

function validate(f: Flags): string[] {
  const errors: string[] = [];
  const positive = (name: string, v: number) =>
    v > 0 || errors.push(`--${name}: must be greater than 0 (got ${v})`);
  positive("concurrent-service-syncs", f.concurrentServiceSyncs);
  positive("concurrent-node-syncs", f.concurrentNodeSyncs);
  positive("kube-api-qps", f.kubeApiQps);
  positive("kube-api-burst", f.kubeApiBurst);
  positive("node-monitor-period", f.nodeMonitorPeriod);
  positive("node-status-update-frequency", f.nodeStatusUpdateFrequency);
  positive("route-reconciliation-period", f.routeReconciliationPeriod);
  if (!(f.driftRepairPeriod >= 0)) errors.push(`--drift-repair-period: must not be negative`);
  if (!(f.nodeDeletionMaxPercent >= 0 && f.nodeDeletionMaxPercent <= 100)) {
    errors.push(`--node-deletion-max-percent: must be 0-100 (got ${f.nodeDeletionMaxPercent})`);
  }
  if (f.securePort < 0 || f.securePort > 65535) {
    errors.push(`--secure-port: ${f.securePort} is not a port (0-65535)`);
  }
  if (!parseIp(f.bindAddress)) errors.push(`--bind-address: "${f.bindAddress}" is not an IP address`);
  if (f.clusterCidr) {
    const parts = f.clusterCidr.split(",").map((s) => s.trim());
    for (const p of parts) if (!parseCidr(p)) errors.push(`--cluster-cidr: "${p}" is not a CIDR range`);
    if (parts.length > 2) {
      errors.push(`--cluster-cidr: at most two ranges (one IPv4, one IPv6), got ${parts.length}`);
    }
  }
  if (f.leaderElect) {
    const {
      leaderElectLeaseDuration: lease,
      leaderElectRenewDeadline: renew,
      leaderElectRetryPeriod: retry,
    } = f;
    if (!(lease > renew)) {
      errors.push(
        `--leader-elect-lease-duration (${
          formatDuration(lease)
        }) must be greater than --leader-elect-renew-deadline (${formatDuration(renew)})`,
      );
    }
    if (!(renew > retry)) {
      errors.push(
        `--leader-elect-renew-deadline (${
          formatDuration(renew)
        }) must be greater than --leader-elect-retry-period (${formatDuration(retry)})`,
      );
    }
  }
  if (f.loadBalancerClassExclusive && !f.loadBalancerClass) {
    errors.push("--load-balancer-class-exclusive needs --load-balancer-class (the class this CCM serves)");
  }
  if (!!f.tlsCertFile !== !!f.tlsPrivateKeyFile) {
    errors.push("--tls-cert-file and --tls-private-key-file go together");
  }
  return errors;
}

/** A flag's default as the command line would write it. */
function shownDefault(f: FlagSpec): string {
  return f.type === "duration"
    ? formatDuration(f.default as number)
    : Array.isArray(f.default)
    ? f.default.join(",")
    : String(f.default);
}

/** docs/reference/flags.md: every flag with its type, default and meaning, and the upstream ones accepted. */
export function flagsPage(): string {
  const cell = (text: string) => text.replaceAll("|", "\\|");
  return [
    "# Command-line flags",
    "",
    "Generated from `config/flags.ts` by `deno task manifests` (the same table `--help` prints); edit the",
    "table, not this page. Durations use Go's syntax (`30s`, `5m0s`).",
    "",
    "| Flag | Type | Default | What it does |",
    "| --- | --- | --- | --- |",
    ...FLAGS.map((f) => {
      const def = shownDefault(f);
      return `| \`--${f.name}\` | ${f.type} | ${def === "" ? "" : `\`${cell(def)}\``} | ${cell(f.help)} |`;
    }),
    "",
    "Accepted without effect, so manifests written for the official CCM start unchanged (logged once):",
    "",
    ...wrap(UPSTREAM_FLAG_NAMES.map((n) => `\`--${n}\``), 100),
    "",
  ].join("\n");
}

/** The `--help` text. */
export function helpText(): string {
  const lines = ["Usage: deno-ccm [flags]", "", "Flags:"];
  for (const f of FLAGS) {
    const def = shownDefault(f);
    // As upstream's help: a boolean shows its default only when it is true.
    const shown = f.type === "bool"
      ? (f.default === true ? " (default true)" : "")
      : def === ""
      ? ""
      : ` (default ${JSON.stringify(def)})`;
    lines.push(`  --${f.name}${f.type === "bool" ? "" : ` ${f.type}`}`, `      ${f.help}${shown}`);
  }
  lines.push(
    "",
    "Accepted without effect, for manifests written for the official CCM (logged once at startup):",
    ...wrap(UPSTREAM_FLAG_NAMES.map((n) => `--${n}`), 100).map((l) => `  ${l}`),
    "",
    "Environment: cloud settings under the official Hetzner CCM's names (meanings and defaults:",
    "docs/reference/environment.md); KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT and HOME locate the cluster:",
    ...wrap([...ENV_VARS], 100).map((l) => `  ${l}`),
  );
  return lines.join("\n");
}

function wrap(words: string[], width: number): string[] {
  const lines: string[] = [];
  for (const w of words) {
    if (lines.length && lines[lines.length - 1].length + w.length + 1 <= width) {
      lines[lines.length - 1] += ` ${w}`;
    } else lines.push(w);
  }
  return lines;
}
