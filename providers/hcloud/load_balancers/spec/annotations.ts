/**
 * The official CCM's `load-balancer.hetzner.cloud/*` Service annotations (plus our
 * `protection-delete`), parsed with the `HCLOUD_LOAD_BALANCERS_*` defaults into one desired
 * configuration. Every invalid value is reported together, naming the annotation and the value.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerDefaults } from "./defaults.ts";
import { parseDuration } from "../../../../lib/duration.ts";
import { parseCidr, parseIp } from "../../../../lib/cidr.ts";
import { parseLabelSelector } from "../../../../lib/label_selector.ts";
import { parseGoBool } from "../../../../lib/go_bool.ts";
import {
  INGRESS_FAMILIES_ANNOTATION,
  KUBE_PROXY_HEALTH_CHECK_ANNOTATION,
  LB_ANNOTATION_PREFIX,
  SHARE_ANNOTATION,
  TLS_SECRET_ANNOTATION,
} from "../../names.ts";
import { shareErrors } from "./share_key.ts";
import { userLabelsFor } from "./user_labels.ts";
import { trimAscii } from "../../../../lib/ascii_space.ts";
import { quoteValue } from "../../../../lib/quote_value.ts";
import { parsePortSettings, type PortSettings } from "./port_settings.ts";
import {
  type BOOLS,
  CHOICES,
  DURATION,
  DURATIONS,
  HOSTNAMES,
  INTEGERS,
  isHostname,
  PATTERNS,
  STATUS_CODE,
  WHOLE_BALANCER,
} from "./annotation_rules.ts";

export { HccmStage } from "./hccm_stage.ts";
export { earliestStage, HCCM_STAGE, KNOWN_ANNOTATIONS } from "./registry.ts";

/** The annotation prefix (names.ts). */
export const PREFIX: string = LB_ANNOTATION_PREFIX;

/** Health check settings for every LB service. */
export interface HealthCheckSpec {
  /** `health-check-protocol`: how the balancer checks a target. */
  protocol?: "tcp" | "http" | "https";
  /** `health-check-port`: the port checked (default: the destination port). */
  port?: number;
  /** `health-check-interval`, in seconds. */
  intervalSeconds?: number;
  /** `health-check-timeout`, in seconds. */
  timeoutSeconds?: number;
  /** `health-check-retries`: failed checks before a target counts as unhealthy. */
  retries?: number;
  /** `health-check-http-domain`: the Host header of an HTTP check. */
  httpDomain?: string;
  /** `health-check-http-path`: the path an HTTP check requests. */
  httpPath?: string;
  /** `health-check-http-validate-certificate`: whether an HTTPS check validates the certificate. */
  httpValidateCertificate?: boolean;
  /** `health-check-http-status-codes`: the status codes (or patterns such as `2??`) that pass. */
  httpStatusCodes?: string[];
}

/** Everything the annotations and defaults ask for. `undefined` means "leave as it is". */
export interface LoadBalancerSpec {
  /** `name`: the balancer's name (default: `a` + the Service's UID without dashes, as the official CCM). */
  name?: string;
  /** `location`: where a new balancer is made (exclusive with `networkZone`). */
  location?: string;
  /** `network-zone`: the zone a new balancer is made in. */
  networkZone?: string;
  /** `type`: the balancer type, e.g. `lb11`. */
  type?: string;
  /** `algorithm-type`: how connections are spread over targets. */
  algorithm?: "round_robin" | "least_connections";
  /** `disable-public-network`: the balancer has no public interface. */
  disablePublicNetwork?: boolean;
  /** `ipv6-disabled`: the ingress lists no IPv6 address. */
  ipv6Disabled: boolean;
  /** `disable-private-ingress`: the ingress lists no private address. */
  disablePrivateIngress: boolean;
  /** `use-private-ip`: targets are reached through the Network. */
  usePrivateIp: boolean;
  /** `private-ipv4`: the balancer's address in the Network. */
  privateIpv4?: string;
  /** `private-subnet-ip-range`: the Network's subnet the balancer attaches to. */
  privateSubnetIpRange?: string;
  /** `hostname`: the ingress names this host instead of addresses. */
  hostname?: string;
  /** `protocol`: `tcp`, `http` or `https` for every port without its own. */
  protocol: "tcp" | "http" | "https";
  /** `uses-proxyprotocol`: targets receive the PROXY protocol header. */
  proxyProtocol: boolean;
  /** `node-selector`: only Nodes matching this label selector become targets. */
  nodeSelector?: string;
  /** `http-cookie-name`: the sticky-session cookie. */
  cookieName?: string;
  /** `http-cookie-lifetime`, in seconds. */
  cookieLifetimeSeconds?: number;
  /** `http-timeout-idle`: how long an idle HTTP connection stays open, in seconds. */
  idleTimeoutSeconds?: number;
  /** `certificate-type`: `uploaded` certificates are named, `managed` ones are requested. */
  certificateType: "uploaded" | "managed";
  /** `http-certificates`: uploaded certificates by name or ID. */
  certificates: string[];
  /** `http-managed-certificate-name`: the name of the managed certificate requested. */
  managedCertificateName?: string;
  /** `http-managed-certificate-domains`: the domains a managed certificate covers. */
  managedCertificateDomains: string[];
  /** Take over a same-named balancer that carries no owner label (ours, opt-in). */
  adoptExisting: boolean;
  /** Sent only when annotated (the official CCM's rule): values set elsewhere are left alone. */
  redirectHttp?: boolean;
  /** `http-sticky-sessions`: requests of one client go to one target (sent only when annotated). */
  stickySessions?: boolean;
  /** The `health-check-*` annotations (and the operator's defaults). */
  healthCheck: HealthCheckSpec;
  /** `ipv4-rdns`: the reverse DNS entry of the public IPv4. */
  ipv4Rdns?: string;
  /** `ipv6-rdns`: the reverse DNS entry of the public IPv6. */
  ipv6Rdns?: string;
  /** `protection-delete`: the balancer carries delete protection. */
  protectDelete?: boolean;
  /** `http-managed-certificate-acme-staging`: the managed certificate comes from Let's Encrypt's staging CA. */
  acmeStaging: boolean;
  /** Whether `type` was annotated (the official CCM warns on every sync when no type is configured). */
  typeAnnotated: boolean;
  /** `public-net-ipv4` / `-ipv6`: Primary IP IDs the balancer is created with (creation only). */
  publicNetIpv4?: number;
  /** `public-net-ipv6`: the Primary IPv6 ID (creation only). */
  publicNetIpv6?: number;
  /**
   * `attach-to`: a balancer made outside Kubernetes (name or ID) this Service co-manages (ours); also
   * `id` alone (kube-hetzner's combined mode points its ingress Service at its Terraform balancer so).
   */
  attachTo?: string;
  /** Which annotation named {@link attachTo} (messages name it). */
  attachVia?: "attach-to" | "id";
  /** Labels of the operator's and the owner's choice on what is created for it (user_labels.ts). */
  labels: Record<string, string>;
  /** `Cluster` traffic health-checks kube-proxy's `/healthz` on 10256 (ours). */
  kubeProxyHealthCheck: boolean;
  /**
   * The ingress lists only the addresses of the Service's `spec.ipFamilies`, in that order (ours;
   * off: every address, as the official CCM). `ipFamilies` is what the Service asks for.
   */
  ingressFamilies?: ("IPv4" | "IPv6")[];
  /** Per-port settings (`service.deno-ccm.io/port-<port>-<setting>`, ours; port_settings.ts). */
  ports: Map<number, PortSettings>;
  /** `service.deno-ccm.io/tls-secret` (ours): a TLS Secret whose certificate https ports serve. */
  tlsSecret?: string;
  /** `service.deno-ccm.io/load-balancer-share` (ours): the key of the balancer shared in the namespace. */
  share?: string;
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
    errors.push(`annotation ${PREFIX}${name}: ${quoteValue(value)} ${why}`);
  };
  const bool = (name: (typeof BOOLS)[number], fallback?: boolean): boolean | undefined => {
    const v = raw(name);
    if (v === undefined) return fallback;
    const parsed = parseGoBool(v);
    if (parsed !== undefined) return parsed;
    fail(name, v, "is not a boolean (true or false)");
    return fallback;
  };
  const oneOf = <N extends keyof typeof CHOICES>(
    name: N,
    fallback?: (typeof CHOICES)[N][number],
  ): (typeof CHOICES)[N][number] | undefined => {
    const v = raw(name);
    if (v === undefined) return fallback;
    const choices: readonly string[] = CHOICES[name];
    const lower = v.toLowerCase();
    if (choices.includes(lower)) return lower as (typeof CHOICES)[N][number];
    fail(name, v, `is not one of ${choices.join(", ")}`);
    return fallback;
  };
  const seconds = (name: keyof typeof DURATIONS, fallbackMs?: number): number | undefined => {
    const v = raw(name);
    if (v === undefined) return fallbackMs === undefined ? undefined : Math.round(fallbackMs / 1000);
    const ms = DURATION.test(v) ? parseDuration(v) : (/^\d+$/.test(v) ? Number(v) * 1000 : undefined);
    if (ms === undefined) {
      fail(name, v, 'is not a duration like "15s" or "1m"');
      return undefined;
    }
    const s = Math.round(ms / 1000);
    const range = DURATIONS[name];
    if (range && (s < range[0] || s > range[1])) {
      fail(name, v, `must be between ${range[0]}s and ${range[1]}s`);
    }
    return s;
  };
  const int = (name: keyof typeof INTEGERS, fallback?: number): number | undefined => {
    const v = raw(name);
    if (v === undefined) return fallback;
    const [min, max] = INTEGERS[name];
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      fail(name, v, `is not an integer between ${min} and ${max}`);
      return fallback;
    }
    return Number(v);
  };
  const name = (n: keyof typeof PATTERNS): string | undefined => {
    const v = raw(n);
    if (v === undefined) return undefined;
    const rule = PATTERNS[n];
    if (!rule.pattern.test(v) || v.length > (rule.maxLength ?? Infinity)) {
      fail(n, v, `is not a valid ${rule.what}`);
    }
    return v;
  };
  const host = (n: keyof typeof HOSTNAMES): string | undefined => {
    const v = raw(n);
    if (v !== undefined && !isHostname(v)) fail(n, v, `is not a valid ${HOSTNAMES[n]}`);
    return v;
  };
  // Ours, under their full names (service.deno-ccm.io/…).
  const ours = (full: string, fallback: boolean): boolean => {
    const v = annotations[full];
    if (v === undefined) return fallback;
    const parsed = parseGoBool(v);
    if (parsed !== undefined) return parsed;
    invalid.add(full);
    errors.push(`annotation ${full}: ${quoteValue(v)} is not a boolean (true or false)`);
    return fallback;
  };
  const list = (n: string) => (raw(n) ?? "").split(",").map(trimAscii).filter(Boolean);

  // An empty location annotation clears an env default location, so network-zone can be used.
  const locationAnnotation = raw("location");
  const location = locationAnnotation === "" ? undefined : name("location") ?? defaults.location;
  const networkZone = name("network-zone") ?? defaults.networkZone;
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
    if (!STATUS_CODE.test(code)) {
      fail(statusCodesName, code, 'is not a status code like "200" or "2??"');
    }
  }
  const certificateType = oneOf("certificate-type", "uploaded")!;
  const managedDomains = list("http-managed-certificate-domains");
  for (const domain of managedDomains) {
    if (!isHostname(domain.replace(/^\*\./, ""))) {
      fail("http-managed-certificate-domains", domain, "is not a domain name (or *.domain)");
    }
  }
  const protocol = oneOf("protocol", "tcp")!;
  // The official CCM makes the managed certificate whatever the protocol, and needs its domains for it.
  if (certificateType === "managed" && managedDomains.length === 0) {
    invalid.add("http-managed-certificate-domains");
    errors.push(
      `annotation ${PREFIX}http-managed-certificate-domains is required with certificate-type managed`,
    );
  }
  const spec: LoadBalancerSpec = {
    name: name("name"),
    location,
    networkZone,
    type: name("type") ?? defaults.type,
    algorithm: oneOf("algorithm-type", defaults.algorithmType),
    disablePublicNetwork: bool("disable-public-network", defaults.disablePublicNetwork),
    ipv6Disabled: bool("ipv6-disabled", defaults.disableIpv6)!,
    disablePrivateIngress: bool("disable-private-ingress", defaults.disablePrivateIngress)!,
    usePrivateIp: bool("use-private-ip", defaults.usePrivateIp)!,
    privateIpv4,
    privateSubnetIpRange: subnet,
    hostname: host("hostname"),
    protocol,
    proxyProtocol: bool("uses-proxyprotocol", defaults.usesProxyProtocol) ?? false,
    nodeSelector: selector,
    cookieName: name("http-cookie-name"),
    cookieLifetimeSeconds: seconds("http-cookie-lifetime"),
    idleTimeoutSeconds: seconds("http-timeout-idle"),
    certificateType,
    certificates: list("http-certificates"),
    managedCertificateName: raw("http-managed-certificate-name"),
    managedCertificateDomains: managedDomains,
    redirectHttp: bool("http-redirect-http"),
    stickySessions: bool("http-sticky-sessions"),
    healthCheck: {
      protocol: oneOf("health-check-protocol"),
      port: int("health-check-port"),
      intervalSeconds: seconds("health-check-interval", defaults.healthCheckIntervalMs),
      timeoutSeconds: seconds("health-check-timeout", defaults.healthCheckTimeoutMs),
      retries: int("health-check-retries", defaults.healthCheckRetries),
      httpDomain: host("health-check-http-domain"),
      httpPath: name("health-check-http-path"),
      httpValidateCertificate: bool("health-check-http-validate-certificate"),
      httpStatusCodes: statusCodes.length ? statusCodes : undefined,
    },
    ipv4Rdns: host("ipv4-rdns"),
    ipv6Rdns: host("ipv6-rdns"),
    protectDelete: bool("protection-delete"),
    adoptExisting: bool("adopt-existing") ?? false,
    // The official CCM reads it with Go's ParseBool and takes anything else as false, without an error.
    acmeStaging: parseGoBool(raw("http-managed-certificate-acme-staging") ?? "") === true,
    typeAnnotated: !!raw("type"),
    publicNetIpv4: int("public-net-ipv4"),
    publicNetIpv6: int("public-net-ipv6"),
    // `id`, which the official CCM reserves and never reads, names the balancer to co-manage when neither
    // attach-to nor a share key does: its maker (Terraform) keeps the balancer, the Service adds its ports.
    attachTo: ((id) => name("attach-to") ?? (annotations[SHARE_ANNOTATION] === undefined ? id : undefined))(
      name("id"),
    ),
    attachVia: raw("attach-to") !== undefined
      ? "attach-to"
      : raw("id") !== undefined && annotations[SHARE_ANNOTATION] === undefined
      ? "id"
      : undefined,
    labels: {},
    kubeProxyHealthCheck: ours(KUBE_PROXY_HEALTH_CHECK_ANNOTATION, defaults.kubeProxyHealthCheck ?? false),
    ingressFamilies: ours(INGRESS_FAMILIES_ANNOTATION, defaults.ingressFollowsIpFamilies ?? false)
      ? ipFamiliesOf(service)
      : undefined,
    ports: new Map(),
    tlsSecret: annotations[TLS_SECRET_ANNOTATION],
    share: annotations[SHARE_ANNOTATION],
  };
  const perPort = parsePortSettings(service, spec, defaults.tlsSecrets ?? false);
  spec.ports = perPort.ports;
  errors.push(...perPort.errors);
  for (const key of perPort.invalid) invalid.add(key);
  const user = userLabelsFor(annotations, defaults.labels ?? {});
  spec.labels = user.labels;
  if (user.errors.length) {
    invalid.add("labels");
    errors.push(...user.errors);
  }
  const wholeBalancer = WHOLE_BALANCER.filter((n) => raw(n) !== undefined);
  // With `id` the whole-balancer annotations (kube-hetzner sets location, type, algorithm...) describe the
  // balancer its maker made: they are left to it, not refused.
  if (spec.attachVia === "attach-to" && wholeBalancer.length) {
    invalid.add("attach-to");
    errors.push(
      `annotation ${PREFIX}attach-to: the balancer belongs to its maker, so ` +
        `${
          wholeBalancer.map((n) => PREFIX + n).join(", ")
        } cannot be set with it (targets and settings of the ` +
        "whole balancer are shared by everything it serves)",
    );
  }
  const shareProblems = spec.share === undefined ? [] : shareErrors(spec.share, (n) => raw(n) !== undefined);
  if (shareProblems.length) {
    invalid.add(SHARE_ANNOTATION);
    errors.push(...shareProblems);
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

/** The Service's address families as the apiserver set them (unknown values dropped; none: undefined). */
function ipFamiliesOf(service: Service): ("IPv4" | "IPv6")[] | undefined {
  const families = (service.spec?.ipFamilies ?? []).filter((f): f is "IPv4" | "IPv6" =>
    f === "IPv4" || f === "IPv6"
  );
  return families.length ? families : undefined;
}
