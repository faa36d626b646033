/**
 * The official CCM's `load-balancer.hetzner.cloud/*` Service annotations (plus our
 * `protection-delete`), parsed with the `HCLOUD_LOAD_BALANCERS_*` defaults into one desired
 * configuration. Every invalid value is reported together, naming the annotation and the value.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerDefaults } from "../config.ts";
import { parseDuration } from "../../../lib/duration.ts";
import { parseCidr, parseIp } from "../../../lib/cidr.ts";
import { parseLabelSelector } from "../../../lib/label_selector.ts";
import { parseGoBool } from "../../../lib/go_bool.ts";
import { LB_ANNOTATION_PREFIX } from "../names.ts";
import { userLabelsFor } from "./user_labels.ts";

/** The annotation prefix (names.ts). */
export const PREFIX = LB_ANNOTATION_PREFIX;

/** Health check settings for every LB service. */
export interface HealthCheckSpec {
  protocol?: "tcp" | "http" | "https";
  port?: number;
  intervalSeconds?: number;
  timeoutSeconds?: number;
  retries?: number;
  httpDomain?: string;
  httpPath?: string;
  httpValidateCertificate?: boolean;
  httpStatusCodes?: string[];
}

/** Everything the annotations and defaults ask for. `undefined` means "leave as it is". */
export interface LoadBalancerSpec {
  name?: string;
  location?: string;
  networkZone?: string;
  type?: string;
  algorithm?: "round_robin" | "least_connections";
  disablePublicNetwork?: boolean;
  ipv6Disabled: boolean;
  disablePrivateIngress: boolean;
  usePrivateIp: boolean;
  privateIpv4?: string;
  privateSubnetIpRange?: string;
  hostname?: string;
  protocol: "tcp" | "http" | "https";
  proxyProtocol: boolean;
  nodeSelector?: string;
  cookieName?: string;
  cookieLifetimeSeconds?: number;
  idleTimeoutSeconds?: number;
  certificateType: "uploaded" | "managed";
  certificates: string[];
  managedCertificateName?: string;
  managedCertificateDomains: string[];
  /** Take over a same-named balancer that carries no owner label (ours, opt-in). */
  adoptExisting: boolean;
  /** Sent only when annotated (the official CCM's rule): values set elsewhere are left alone. */
  redirectHttp?: boolean;
  stickySessions?: boolean;
  healthCheck: HealthCheckSpec;
  ipv4Rdns?: string;
  ipv6Rdns?: string;
  protectDelete?: boolean;
  /** `http-managed-certificate-acme-staging`: the managed certificate comes from Let's Encrypt's staging CA. */
  acmeStaging: boolean;
  /** Whether `type` was annotated (the official CCM warns on every sync when no type is configured). */
  typeAnnotated: boolean;
  /** `public-net-ipv4` / `-ipv6`: Primary IP IDs the balancer is created with (creation only). */
  publicNetIpv4?: number;
  publicNetIpv6?: number;
  /** `attach-to`: a balancer made outside Kubernetes (name or ID) this Service co-manages (ours). */
  attachTo?: string;
  /** Labels of the operator's and the owner's choice on what is created for it (user_labels.ts). */
  labels: Record<string, string>;
}

/** Annotations that change a balancer as a whole: not ours to set on a co-managed one. */
const WHOLE_BALANCER = [
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
];

const ANNOTATIONS = [
  "name",
  "location",
  "network-zone",
  "type",
  "algorithm-type",
  "disable-public-network",
  "ipv6-disabled",
  "disable-private-ingress",
  "use-private-ip",
  "private-ipv4",
  "private-subnet-ip-range",
  "hostname",
  "protocol",
  "uses-proxyprotocol",
  "node-selector",
  "http-cookie-name",
  "http-cookie-lifetime",
  "http-timeout-idle",
  "certificate-type",
  "http-certificates",
  "http-managed-certificate-name",
  "http-managed-certificate-domains",
  "http-managed-certificate-acme-staging",
  "http-redirect-http",
  "http-sticky-sessions",
  "health-check-protocol",
  "health-check-port",
  "health-check-interval",
  "health-check-timeout",
  "health-check-retries",
  "health-check-http-domain",
  "health-check-http-path",
  "health-check-http-validate-certificate",
  "health-check-http-status-codes",
  "http-status-codes",
  "ipv4-rdns",
  "ipv6-rdns",
  "protection-delete",
  "adopt-existing",
  "public-net-ipv4",
  "public-net-ipv6",
  "attach-to",
  "ipv4",
  "ipv6",
  "id",
] as const;

/** Known annotation names (without prefix), for documentation and unknown-annotation warnings. */
export const KNOWN_ANNOTATIONS: readonly string[] = ANNOTATIONS;

/**
 * The stages of the official CCM's sync of a balancer (`hcloud/load_balancers.go` EnsureLoadBalancer,
 * `internal/hcops/load_balancer.go`), in order. It reads each annotation where it uses it, so a value
 * it refuses ends the sync in that stage, after what the earlier stages did and said. Ours checks
 * every value before the first cloud call; the stage of the earliest refused value decides which
 * warnings still come with the failure, as they would from HCCM.
 */
export enum HccmStage {
  /** Parsed before anything else. */
  NodeSelector = 0,
  /** Creation: the type is resolved (and warned about) first, then location, algorithm, public net. */
  Create = 1,
  /** The balancer's own settings: name, reverse DNS, algorithm, type, network, public interface. */
  Balancer = 2,
  /** The services, port by port (a non-TCP port is reported as it is reached). */
  Services = 3,
  /** The targets. */
  Targets = 4,
  /** The ingress written to the Service. */
  Ingress = 5,
}

/** Where HCCM reads each annotation (ours only: where it would matter to HCCM's order). */
export const HCCM_STAGE: Record<(typeof ANNOTATIONS)[number], HccmStage> = {
  "node-selector": HccmStage.NodeSelector,
  "attach-to": HccmStage.NodeSelector,
  name: HccmStage.Create,
  location: HccmStage.Create,
  "network-zone": HccmStage.Create,
  type: HccmStage.Create,
  "algorithm-type": HccmStage.Create,
  "disable-public-network": HccmStage.Create,
  "adopt-existing": HccmStage.Create,
  "public-net-ipv4": HccmStage.Create,
  "public-net-ipv6": HccmStage.Create,
  "ipv4-rdns": HccmStage.Balancer,
  "ipv6-rdns": HccmStage.Balancer,
  "private-ipv4": HccmStage.Balancer,
  "private-subnet-ip-range": HccmStage.Balancer,
  "protection-delete": HccmStage.Balancer,
  protocol: HccmStage.Services,
  "uses-proxyprotocol": HccmStage.Services,
  "http-cookie-name": HccmStage.Services,
  "http-cookie-lifetime": HccmStage.Services,
  "http-timeout-idle": HccmStage.Services,
  "certificate-type": HccmStage.Services,
  "http-certificates": HccmStage.Services,
  "http-managed-certificate-name": HccmStage.Services,
  "http-managed-certificate-domains": HccmStage.Services,
  "http-managed-certificate-acme-staging": HccmStage.Services,
  "http-redirect-http": HccmStage.Services,
  "http-sticky-sessions": HccmStage.Services,
  "health-check-protocol": HccmStage.Services,
  "health-check-port": HccmStage.Services,
  "health-check-interval": HccmStage.Services,
  "health-check-timeout": HccmStage.Services,
  "health-check-retries": HccmStage.Services,
  "health-check-http-domain": HccmStage.Services,
  "health-check-http-path": HccmStage.Services,
  "health-check-http-validate-certificate": HccmStage.Services,
  "health-check-http-status-codes": HccmStage.Services,
  "http-status-codes": HccmStage.Services,
  "use-private-ip": HccmStage.Targets,
  hostname: HccmStage.Ingress,
  "ipv6-disabled": HccmStage.Ingress,
  "disable-private-ingress": HccmStage.Ingress,
  ipv4: HccmStage.Ingress,
  ipv6: HccmStage.Ingress,
  id: HccmStage.Ingress,
};

/** The stage of the earliest annotation in `invalid` (undefined: none refused). */
export function earliestStage(invalid: Iterable<string>): HccmStage | undefined {
  let earliest: HccmStage | undefined;
  for (const name of invalid) {
    const stage = HCCM_STAGE[name as keyof typeof HCCM_STAGE] ?? HccmStage.Services;
    if (earliest === undefined || stage < earliest) earliest = stage;
  }
  return earliest;
}

/** A DNS name: labels of letters, digits and inner hyphens, at most 253 characters, optional final dot. */
const HOSTNAME =
  /^(?=.{1,253}\.?$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.?$/;
/** An RFC 6265 cookie name (a token). */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;
/** An HTTP path: starts with `/`, printable ASCII without spaces. */
const HTTP_PATH = /^\/[\x21-\x7e]{0,1023}$/;

/** A value as events show it: escaped, and at most 64 characters. */
function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value) +
    (value.length > 64 ? ` (${value.length} characters)` : "");
}

/**
 * Parses the Service's annotations; returns the spec or every problem, and which annotations
 * (without prefix) had an invalid value.
 */
export function parseLoadBalancerSpec(
  service: Service,
  defaults: LoadBalancerDefaults,
): { spec: LoadBalancerSpec; errors: string[]; invalid: Set<string> } {
  const annotations = service.metadata?.annotations ?? {};
  const errors: string[] = [];
  const invalid = new Set<string>();
  const raw = (name: string): string | undefined => annotations[PREFIX + name];
  // The value is quoted escaped and cut short: a 10 kB value or a NUL byte must not reach an event whole.
  const fail = (name: string, value: string, why: string) => {
    invalid.add(name);
    errors.push(`annotation ${PREFIX}${name}: ${quote(value)} ${why}`);
  };
  const bool = (name: string, fallback?: boolean): boolean | undefined => {
    const v = raw(name);
    if (v === undefined) return fallback;
    const parsed = parseGoBool(v);
    if (parsed !== undefined) return parsed;
    fail(name, v, "is not a boolean (true or false)");
    return fallback;
  };
  const oneOf = <T extends string>(name: string, choices: readonly T[], fallback?: T): T | undefined => {
    const v = raw(name);
    if (v === undefined) return fallback;
    const lower = v.toLowerCase() as T;
    if (choices.includes(lower)) return lower;
    fail(name, v, `is not one of ${choices.join(", ")}`);
    return fallback;
  };
  const seconds = (name: string, fallbackMs?: number, range?: [number, number]): number | undefined => {
    const v = raw(name);
    if (v === undefined) return fallbackMs === undefined ? undefined : Math.round(fallbackMs / 1000);
    const ms = parseDuration(v) ?? (/^\d+$/.test(v) ? Number(v) * 1000 : undefined);
    if (ms === undefined) {
      fail(name, v, 'is not a duration like "15s" or "1m"');
      return undefined;
    }
    const s = Math.round(ms / 1000);
    if (range && (s < range[0] || s > range[1])) {
      fail(name, v, `must be between ${range[0]}s and ${range[1]}s`);
    }
    return s;
  };
  const int = (name: string, min: number, max: number, fallback?: number): number | undefined => {
    const v = raw(name);
    if (v === undefined) return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      fail(name, v, `is not an integer between ${min} and ${max}`);
      return fallback;
    }
    return Number(v);
  };
  const name = (n: string, pattern: RegExp, what: string): string | undefined => {
    const v = raw(n);
    if (v === undefined) return undefined;
    if (!pattern.test(v)) fail(n, v, `is not a valid ${what}`);
    return v;
  };
  const list = (n: string) => (raw(n) ?? "").split(",").map((s) => s.trim()).filter(Boolean);

  // An empty location annotation clears an env default location, so network-zone can be used.
  const locationAnnotation = raw("location");
  const location = locationAnnotation === ""
    ? undefined
    : name("location", /^[a-z0-9-]+$/, "location name") ?? defaults.location;
  const networkZone = name("network-zone", /^[a-z0-9-]+$/, "network zone") ?? defaults.networkZone;
  const privateIpv4 = raw("private-ipv4");
  if (privateIpv4 !== undefined && parseIp(privateIpv4)?.family !== 4) {
    fail("private-ipv4", privateIpv4, "is not an IPv4 address");
  }
  const subnet = raw("private-subnet-ip-range") ?? defaults.privateSubnetIpRange;
  if (raw("private-subnet-ip-range") !== undefined && !parseCidr(subnet!)) {
    fail("private-subnet-ip-range", subnet!, "is not a CIDR range");
  }
  const selector = raw("node-selector");
  if (selector !== undefined) {
    try {
      parseLabelSelector(selector);
    } catch (err) {
      fail("node-selector", selector, `is not a label selector: ${(err as Error).message}`);
    }
  }
  // The official CCM's name is `http-status-codes`; ours was `health-check-http-status-codes`: both are read.
  const statusCodesName = `${PREFIX}http-status-codes` in (service.metadata?.annotations ?? {})
    ? "http-status-codes"
    : "health-check-http-status-codes";
  const statusCodes = list(statusCodesName);
  for (const code of statusCodes) {
    if (!/^[1-5][0-9?]{2}$/.test(code)) {
      fail(statusCodesName, code, 'is not a status code like "200" or "2??"');
    }
  }
  const certificateType = oneOf("certificate-type", ["uploaded", "managed"] as const, "uploaded")!;
  const managedDomains = list("http-managed-certificate-domains");
  for (const domain of managedDomains) {
    if (!HOSTNAME.test(domain.replace(/^\*\./, ""))) {
      fail("http-managed-certificate-domains", domain, "is not a domain name (or *.domain)");
    }
  }
  const protocol = oneOf("protocol", ["tcp", "http", "https"] as const, "tcp")!;
  // The official CCM makes the managed certificate whatever the protocol, and needs its domains for it.
  if (certificateType === "managed" && managedDomains.length === 0) {
    invalid.add("http-managed-certificate-domains");
    errors.push(
      `annotation ${PREFIX}http-managed-certificate-domains is required with certificate-type managed`,
    );
  }
  const spec: LoadBalancerSpec = {
    name: name("name", /^[a-zA-Z0-9]([a-zA-Z0-9._-]{0,61}[a-zA-Z0-9])?$/, "load balancer name"),
    location,
    networkZone,
    type: name("type", /^[a-z0-9-]+$/, "load balancer type") ?? defaults.type,
    algorithm: oneOf("algorithm-type", ["round_robin", "least_connections"] as const, defaults.algorithmType),
    disablePublicNetwork: bool("disable-public-network", defaults.disablePublicNetwork),
    ipv6Disabled: bool("ipv6-disabled", defaults.disableIpv6)!,
    disablePrivateIngress: bool("disable-private-ingress", defaults.disablePrivateIngress)!,
    usePrivateIp: bool("use-private-ip", defaults.usePrivateIp)!,
    privateIpv4,
    privateSubnetIpRange: subnet,
    hostname: name("hostname", HOSTNAME, "hostname"),
    protocol,
    proxyProtocol: bool("uses-proxyprotocol", defaults.usesProxyProtocol) ?? false,
    nodeSelector: selector,
    cookieName: name("http-cookie-name", COOKIE_NAME, "cookie name (1-64 token characters, RFC 6265)"),
    cookieLifetimeSeconds: seconds("http-cookie-lifetime"),
    idleTimeoutSeconds: seconds("http-timeout-idle", undefined, [30, 300]),
    certificateType,
    certificates: list("http-certificates"),
    managedCertificateName: raw("http-managed-certificate-name"),
    managedCertificateDomains: managedDomains,
    redirectHttp: bool("http-redirect-http"),
    stickySessions: bool("http-sticky-sessions"),
    healthCheck: {
      protocol: oneOf("health-check-protocol", ["tcp", "http", "https"] as const),
      port: int("health-check-port", 1, 65535),
      intervalSeconds: seconds("health-check-interval", defaults.healthCheckIntervalMs, [3, 60]),
      timeoutSeconds: seconds("health-check-timeout", defaults.healthCheckTimeoutMs, [1, 60]),
      retries: int("health-check-retries", 0, 5, defaults.healthCheckRetries),
      httpDomain: name("health-check-http-domain", HOSTNAME, "domain name"),
      httpPath: name(
        "health-check-http-path",
        HTTP_PATH,
        "path (starting with /, printable, at most 1024 characters)",
      ),
      httpValidateCertificate: bool("health-check-http-validate-certificate"),
      httpStatusCodes: statusCodes.length ? statusCodes : undefined,
    },
    ipv4Rdns: name("ipv4-rdns", HOSTNAME, "hostname for reverse DNS"),
    ipv6Rdns: name("ipv6-rdns", HOSTNAME, "hostname for reverse DNS"),
    protectDelete: bool("protection-delete"),
    adoptExisting: bool("adopt-existing") ?? false,
    // The official CCM reads it with Go's ParseBool and takes anything else as false, without an error.
    acmeStaging: parseGoBool(raw("http-managed-certificate-acme-staging") ?? "") === true,
    typeAnnotated: !!raw("type"),
    publicNetIpv4: int("public-net-ipv4", 1, Number.MAX_SAFE_INTEGER),
    publicNetIpv6: int("public-net-ipv6", 1, Number.MAX_SAFE_INTEGER),
    attachTo: name(
      "attach-to",
      /^(\d+|[a-zA-Z0-9]([a-zA-Z0-9._-]{0,61}[a-zA-Z0-9])?)$/,
      "load balancer name or ID",
    ),
    labels: {},
  };
  const user = userLabelsFor(annotations, defaults.labels ?? {});
  spec.labels = user.labels;
  if (user.errors.length) {
    invalid.add("labels");
    errors.push(...user.errors);
  }
  const wholeBalancer = WHOLE_BALANCER.filter((n) => raw(n) !== undefined);
  if (spec.attachTo !== undefined && wholeBalancer.length) {
    invalid.add("attach-to");
    errors.push(
      `annotation ${PREFIX}attach-to: the balancer belongs to its maker, so ` +
        `${
          wholeBalancer.map((n) => PREFIX + n).join(", ")
        } cannot be set with it (targets and settings of the ` +
        "whole balancer are shared by everything it serves)",
    );
  }
  if ((spec.publicNetIpv4 || spec.publicNetIpv6) && spec.disablePublicNetwork) {
    invalid.add("public-net-ipv4");
    errors.push(
      `annotation ${PREFIX}public-net-ipv4/-ipv6 needs the public network, but ` +
        `${PREFIX}disable-public-network (or HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK) disables it`,
    );
  }
  return { spec, errors, invalid };
}

/** The default name: `"a"` + UID without dashes, cut to 32 characters (upstream). */
export function defaultLoadBalancerName(service: Service): string {
  return `a${(service.metadata?.uid ?? "").replace(/-/g, "")}`.slice(0, 32);
}
