/**
 * What each `load-balancer.hetzner.cloud/*` annotation may hold: the one table both the CCM's parser
 * (annotations.ts) and the apiserver's admission policy (admission_policy.ts) are made from, so the
 * two cannot drift. Every annotation is in exactly one of the tables below (a test checks it).
 *
 * Patterns are written in the common subset of JavaScript and RE2 (no look-around, no
 * back-references, repetitions up to 1000), as CEL's `matches()` runs them with RE2.
 *
 * @module
 */
import { ASCII_SPACE } from "../../../../lib/ascii_space.ts";
import {
  FIREWALL_NODEPORTS_ANNOTATION,
  INGRESS_FAMILIES_ANNOTATION,
  KUBE_PROXY_HEALTH_CHECK_ANNOTATION,
} from "../../names.ts";

/** Annotations read with Go's `strconv.ParseBool`. */
export const BOOLS = [
  "disable-public-network",
  "ipv6-disabled",
  "disable-private-ingress",
  "use-private-ip",
  "uses-proxyprotocol",
  "http-redirect-http",
  "http-sticky-sessions",
  "health-check-http-validate-certificate",
  "protection-delete",
  "adopt-existing",
] as const;

/** Our own boolean Service annotations, by full name (names.ts). */
export const OUR_BOOLS = [
  KUBE_PROXY_HEALTH_CHECK_ANNOTATION,
  INGRESS_FAMILIES_ANNOTATION,
  FIREWALL_NODEPORTS_ANNOTATION,
] as const;

/** A Secret's name (a DNS subdomain, as Kubernetes names Secrets). */
export const SECRET_NAME = {
  pattern: /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
  maxLength: 253,
  what: "Secret name",
};

/** Annotations with a fixed set of values, compared case-insensitively. */
export const CHOICES = {
  "algorithm-type": ["round_robin", "least_connections"],
  protocol: ["tcp", "http", "https"],
  "certificate-type": ["uploaded", "managed"],
  "health-check-protocol": ["tcp", "http", "https"],
} as const;

/**
 * Durations (Go syntax, or whole seconds), rounded to seconds, with the range Hetzner's API accepts
 * (undefined: any).
 */
export const DURATIONS: Record<
  "http-cookie-lifetime" | "http-timeout-idle" | "health-check-interval" | "health-check-timeout",
  readonly [number, number] | undefined
> = {
  "http-cookie-lifetime": undefined,
  "http-timeout-idle": [30, 300],
  "health-check-interval": [3, 60],
  "health-check-timeout": [1, 60],
};

/** Whole numbers (ASCII digits) and their range. */
export const INTEGERS = {
  "health-check-port": [1, 65535],
  "health-check-retries": [0, 5],
  "public-net-ipv4": [1, Number.MAX_SAFE_INTEGER],
  "public-net-ipv6": [1, Number.MAX_SAFE_INTEGER],
} as const;

/** A balancer's name: Hetzner's rule (alphanumeric ends, `.`, `_`, `-` inside, at most 63). */
const LB_NAME = "[a-zA-Z0-9]([a-zA-Z0-9._-]{0,61}[a-zA-Z0-9])?";

/** A value that must match a pattern, what it is called in the message, and its longest length. */
export interface PatternRule {
  pattern: RegExp;
  what: string;
  maxLength?: number;
  /** The empty value means "unset" (location: clears the environment's default). */
  emptyAllowed?: boolean;
}

/** Annotations that must match a pattern. */
export const PATTERNS: Record<
  | "name"
  | "location"
  | "network-zone"
  | "type"
  | "http-cookie-name"
  | "health-check-http-path"
  | "attach-to"
  | "id",
  PatternRule
> = {
  name: { pattern: new RegExp(`^${LB_NAME}$`), what: "load balancer name" },
  location: { pattern: /^[a-z0-9-]+$/, what: "location name", emptyAllowed: true },
  "network-zone": { pattern: /^[a-z0-9-]+$/, what: "network zone" },
  type: { pattern: /^[a-z0-9-]+$/, what: "load balancer type" },
  // An RFC 6265 cookie name (a token).
  "http-cookie-name": {
    pattern: /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/,
    what: "cookie name (1-64 token characters, RFC 6265)",
  },
  // Starts with `/`, printable ASCII without spaces.
  "health-check-http-path": {
    pattern: /^\/[\x21-\x7e]*$/,
    maxLength: 1024,
    what: "path (starting with /, printable, at most 1024 characters)",
  },
  "attach-to": { pattern: new RegExp(`^(\\d+|${LB_NAME})$`), what: "load balancer name or ID" },
  id: { pattern: /^[1-9]\d{0,15}$/, what: "load balancer ID" },
};

/** Annotations holding a DNS name, and what the message calls it. */
export const HOSTNAMES = {
  hostname: "hostname",
  "health-check-http-domain": "domain name",
  "ipv4-rdns": "hostname for reverse DNS",
  "ipv6-rdns": "hostname for reverse DNS",
} as const;

/**
 * A DNS name without its length limit: labels of letters, digits and inner hyphens, optional final
 * dot. The limit (253 characters, not counting a final dot) is {@link isHostname}'s.
 */
export const HOSTNAME_LABELS =
  /^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.?$/;

/** True for a DNS name of at most 253 characters (254 with a final dot). */
export function isHostname(text: string): boolean {
  return (text.length <= 253 || (text.length === 254 && text.endsWith("."))) && HOSTNAME_LABELS.test(text);
}

/** An IPv4 address in dotted decimal without leading zeros (what lib/cidr.ts parses). */
export const IPV4 = (() => {
  const octet = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  return new RegExp(`^(${octet}\\.){3}${octet}$`);
})();

/** An IPv4 CIDR range as lib/cidr.ts reads it: the prefix length has 1-3 digits (leading zeros allowed). */
export const IPV4_CIDR = new RegExp(`${IPV4.source.slice(0, -1)}/(0{0,2}[0-9]|0?[12][0-9]|0?3[0-2])$`);

/** One HTTP status code, or a class like `2??`. */
export const STATUS_CODE = /^[1-5][0-9?]{2}$/;

/** The other annotations: what is checked, or why nothing is. */
export const OTHERS = {
  "private-ipv4": "an IPv4 address",
  "private-subnet-ip-range": "a CIDR range",
  "node-selector": "a label selector",
  "http-status-codes": "a comma-separated list of status codes",
  "health-check-http-status-codes": "a comma-separated list of status codes (ours; http-status-codes wins)",
  "http-managed-certificate-domains": "a comma-separated list of domain names (or *.domain)",
  "http-certificates": "free: certificate names or IDs, resolved against the cloud",
  "http-managed-certificate-name": "free: the name of the certificate to create",
  "http-managed-certificate-acme-staging": "free: read as Go's ParseBool reads it, anything else is false",
  ipv4: "free: not read by the CCM",
  ipv6: "free: not read by the CCM",
} as const;

/** Annotations that change a balancer as a whole: not ours to set on a co-managed one (`attach-to`). */
export const WHOLE_BALANCER = [
  "name",
  "location",
  "network-zone",
  "type",
  "algorithm-type",
  "disable-public-network",
  "private-ipv4",
  "private-subnet-ip-range",
  "node-selector",
  "ipv4-rdns",
  "ipv6-rdns",
  "protection-delete",
  "adopt-existing",
  "public-net-ipv4",
  "public-net-ipv6",
] as const;

/** A Go duration after optional ASCII space, or whole seconds (what annotations.ts reads). */
export const DURATION = new RegExp(
  `^${ASCII_SPACE}*(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|ms|s|m|h))+)${ASCII_SPACE}*$`,
);

/** The kinds of value an annotation holds: which table of this file it is in. */
export type ValueKind = "bool" | "choice" | "duration" | "integer" | "pattern" | "hostname" | "other";

/** Which table `name` (without prefix) is in; undefined for a name in none. */
export function valueKind(name: string): ValueKind | undefined {
  if ((BOOLS as readonly string[]).includes(name)) return "bool";
  if (name in CHOICES) return "choice";
  if (name in DURATIONS) return "duration";
  if (name in INTEGERS) return "integer";
  if (name in PATTERNS) return "pattern";
  if (name in HOSTNAMES) return "hostname";
  if (name in OTHERS) return "other";
  return undefined;
}
