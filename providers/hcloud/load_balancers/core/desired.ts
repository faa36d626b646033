/**
 * What a Service asks of its load balancer: LB services (one per TCP port), server targets, and
 * the status ingress; plus comparisons that only look at what we set, so an unchanged Service
 * causes no update.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerIngress, ProviderWarning } from "../../../provider.ts";
import type { Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import { parseProviderId } from "../../provider_id.ts";
import { parseLabelSelector } from "../../../../lib/label_selector.ts";
import { redirectPort } from "../spec/mod.ts";

/** An LB service as we send it. */
export interface DesiredService {
  /** The service's protocol. */
  protocol: "tcp" | "http" | "https";
  /** The port the balancer listens on. */
  listen_port: number;
  /** The port on the target it sends to (the NodePort, or the Service's port with private IPs). */
  destination_port: number;
  /** Whether the target receives the PROXY protocol header. */
  proxyprotocol: boolean;
  /** How the balancer checks each target. */
  health_check: {
    protocol: "tcp" | "http";
    port: number;
    interval?: number;
    timeout?: number;
    retries?: number;
    http?: { domain: string | null; path: string; status_codes?: string[]; tls: boolean };
  };
  /** HTTP settings (http and https services only). */
  http?: {
    cookie_name?: string;
    cookie_lifetime?: number;
    certificates?: number[];
    redirect_http?: boolean;
    sticky_sessions?: boolean;
    timeout_idle?: number;
  };
}

/** A problem worth a Warning event but not a failure. */
export type LbWarning = ProviderWarning;

/** A warning for each port Hetzner's balancers cannot serve (only TCP). */
export function unsupportedPorts(service: Service): LbWarning[] {
  return (service.spec?.ports ?? []).filter((port) => (port.protocol ?? "TCP") !== "TCP").map((port) => ({
    reason: "UnsupportedProtocolConfigured",
    message: `port ${
      port.name ?? port.port
    }/${port.protocol} is not supported by Hetzner load balancers; only TCP ports are served`,
  }));
}

/** kube-proxy's health server (`--healthz-bind-address`, default `0.0.0.0:10256`). */
export const KUBE_PROXY_HEALTH_PORT = 10256;

/**
 * The LB services for the Service's TCP ports; other protocols produce a warning. A port's own
 * settings (`spec.ports`, port_settings.ts) win over the Service-wide ones; its certificates are in
 * `portCertificateIds`, the Service-wide ones in `certificateIds`. Port 80 gets no service of its own
 * when another port's HTTPS service redirects it.
 */
export function desiredServices(
  service: Service,
  spec: LoadBalancerSpec,
  certificateIds: number[],
  portCertificateIds: Map<number, number[]> = new Map(),
): { services: DesiredService[]; warnings: LbWarning[] } {
  const warnings: LbWarning[] = unsupportedPorts(service);
  const services: DesiredService[] = [];
  const local = service.spec?.externalTrafficPolicy === "Local" && !!service.spec?.healthCheckNodePort;
  // Opt-in (ours): Cluster traffic asks kube-proxy, which fails on a Node that is leaving (KEP-3836);
  // not the default, as a cluster without kube-proxy (Cilium, say) would lose every target.
  const kubeProxy = !local && spec.kubeProxyHealthCheck;
  const redirecting = redirectPort(spec.ports) !== undefined;
  for (const port of service.spec?.ports ?? []) {
    if ((port.protocol ?? "TCP") !== "TCP") continue;
    if (!port.nodePort) continue; // allocateLoadBalancerNodePorts=false: nothing to target
    if (redirecting && port.port === 80) continue; // answered by the HTTPS service's redirect
    const own = spec.ports.get(port.port);
    const protocol = own?.protocol ?? spec.protocol;
    const hc = { ...spec.healthCheck, ...definedOnly(own?.healthCheck ?? {}) };
    // As the official CCM: with any health-check setting but the protocol, the check speaks the
    // service's protocol; with none, TCP. externalTrafficPolicy Local without settings asks
    // kube-proxy's health endpoint, so only nodes with endpoints get traffic.
    const configured = Object.entries(hc).some(([k, v]) => k !== "protocol" && v !== undefined);
    const hcLocal = local && !configured && hc.protocol === undefined;
    // Interval, timeout and retries only time the kube-proxy check; what it asks is the opt-in's.
    const hcProxy = kubeProxy &&
      [hc.protocol, hc.port, hc.httpDomain, hc.httpPath, hc.httpValidateCertificate, hc.httpStatusCodes]
        .every((v) => v === undefined);
    const hcProtocol = hc.protocol ?? (hcLocal || hcProxy ? "http" : configured ? protocol : "tcp");
    const health: DesiredService["health_check"] = {
      protocol: hcProtocol === "tcp" ? "tcp" : "http",
      port: hc.port ??
        (hcLocal ? service.spec!.healthCheckNodePort! : hcProxy ? KUBE_PROXY_HEALTH_PORT : port.nodePort),
    };
    if (hc.intervalSeconds !== undefined) health.interval = hc.intervalSeconds;
    if (hc.timeoutSeconds !== undefined) health.timeout = hc.timeoutSeconds;
    if (hc.retries !== undefined) health.retries = hc.retries;
    if (health.protocol === "http") {
      health.http = {
        domain: hc.httpDomain ?? null,
        path: hc.httpPath ?? (hcLocal || hcProxy ? "/healthz" : "/"),
        tls: hc.httpValidateCertificate ?? hcProtocol === "https",
      };
      if (hc.httpStatusCodes) health.http.status_codes = hc.httpStatusCodes;
    }
    const desired: DesiredService = {
      protocol,
      listen_port: port.port,
      destination_port: port.nodePort,
      proxyprotocol: own?.proxyProtocol ?? spec.proxyProtocol,
      health_check: health,
    };
    if (protocol !== "tcp") {
      const http: NonNullable<DesiredService["http"]> = {};
      desired.http = http;
      const redirect = own?.redirectHttp ?? spec.redirectHttp;
      if (redirect !== undefined) http.redirect_http = redirect;
      if (spec.stickySessions !== undefined) http.sticky_sessions = spec.stickySessions;
      if (spec.cookieName !== undefined) desired.http.cookie_name = spec.cookieName;
      if (spec.cookieLifetimeSeconds !== undefined) desired.http.cookie_lifetime = spec.cookieLifetimeSeconds;
      if (spec.idleTimeoutSeconds !== undefined) desired.http.timeout_idle = spec.idleTimeoutSeconds;
      if (protocol === "https") {
        desired.http.certificates = portCertificateIds.get(port.port) ?? certificateIds;
      }
    }
    services.push(desired);
  }
  return { services, warnings };
}

/** The entries whose value is set. */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

type ActualService = Schemas["load_balancer_service"];

/** True when `actual` differs from `desired` in any field we set. */
export function serviceDiffers(desired: DesiredService, actual: ActualService): boolean {
  const a = actual as ActualService & { http?: { timeout_idle?: number } };
  if (desired.protocol !== a.protocol || desired.destination_port !== a.destination_port) return true;
  if (desired.proxyprotocol !== a.proxyprotocol) return true;
  const dh = desired.health_check;
  const ah = a.health_check;
  if (dh.protocol !== ah.protocol || dh.port !== ah.port) return true;
  for (const k of ["interval", "timeout", "retries"] as const) {
    if (dh[k] !== undefined && dh[k] !== ah[k]) return true;
  }
  if (dh.http) {
    const h = ah.http;
    if (!h || h.path !== dh.http.path || (h.domain ?? null) !== dh.http.domain || h.tls !== dh.http.tls) {
      return true;
    }
    if (dh.http.status_codes && JSON.stringify(dh.http.status_codes) !== JSON.stringify(h.status_codes)) {
      return true;
    }
  }
  if (desired.http) {
    const h = a.http ?? {};
    for (const [k, v] of Object.entries(desired.http)) {
      const actualValue = (h as Record<string, unknown>)[k];
      if (
        Array.isArray(v)
          ? JSON.stringify([...v].sort()) !== JSON.stringify([...(actualValue as number[] ?? [])].sort())
          : v !== actualValue
      ) {
        return true;
      }
    }
  }
  return false;
}

/**
 * Server IDs the Service's eligible Nodes map to, after the node selector; Nodes named in `keep`
 * stay although it no longer admits them (they drain).
 */
export function desiredServerIds(
  nodes: Node[],
  spec: LoadBalancerSpec,
  robotEnabled = false,
  keep?: ReadonlySet<string>,
): { ids: number[]; warnings: LbWarning[] } {
  const selector = spec.nodeSelector ? parseLabelSelector(spec.nodeSelector) : undefined;
  const ids = new Set<number>();
  const warnings: LbWarning[] = [];
  for (const node of nodes) {
    const kept = keep?.has(node.metadata?.name ?? "") ?? false;
    if (selector && !kept && !selector.matches(node.metadata?.labels ?? {})) continue;
    const parsed = parseProviderId(node.spec?.providerID);
    if (parsed.kind === "cloud") ids.add(parsed.id);
    else if (parsed.kind !== "none" && !(parsed.kind === "robot" && robotEnabled)) {
      warnings.push({
        reason: "UnknownProviderIDPrefix",
        message:
          `provider ID ${node.spec?.providerID} is not a Hetzner Cloud server: not a load balancer target`,
        node: node.metadata?.name,
      });
    }
  }
  return { ids: [...ids].sort((a, b) => a - b), warnings };
}

/** Status ingress in the official CCM's order: hostname alone, or IPv4, IPv6, private IPs. */
export function ingressOf(lb: Schemas["load_balancer"], spec: LoadBalancerSpec): LoadBalancerIngress[] {
  if (spec.hostname) return [{ hostname: spec.hostname }];
  const ipMode = spec.proxyProtocol ? "Proxy" : "VIP";
  const ingress: LoadBalancerIngress[] = [];
  if (lb.public_net?.enabled) {
    if (lb.public_net.ipv4?.ip) ingress.push({ ip: lb.public_net.ipv4.ip, ipMode });
    if (!spec.ipv6Disabled && lb.public_net.ipv6?.ip) ingress.push({ ip: lb.public_net.ipv6.ip, ipMode });
  }
  if (!spec.disablePrivateIngress) {
    for (const p of lb.private_net ?? []) if (p.ip) ingress.push({ ip: p.ip, ipMode });
  }
  if (!spec.ingressFamilies) return ingress;
  // Opted in: the Service's families, in its order (each family's addresses as above).
  const familyOf = (ip: string) => ip.includes(":") ? "IPv6" : "IPv4";
  return spec.ingressFamilies.flatMap((family) => ingress.filter((i) => familyOf(i.ip!) === family));
}
