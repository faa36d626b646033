/**
 * Per-port settings (ours, opt-in; official CCM #984): `service.deno-ccm.io/port-<port>-<setting>`
 * gives one Service port its own protocol, certificates, HTTP-to-HTTPS redirect, PROXY protocol and
 * health check, overriding for that port what the `load-balancer.hetzner.cloud/*` annotations say
 * for all. Hetzner keeps these per balancer service already; the official CCM's annotations set one
 * value for every port. A Service without such an annotation is served exactly as before.
 *
 * Each setting is its own annotation, named after the official CCM's (`port-443-protocol`,
 * `port-443-http-certificates`), so every value has one simple type that the admission policy can
 * check like the others, and a port's settings are added or removed one by one. Values are checked
 * against the Service before any cloud call: an unknown port or setting, a certificate on a port that
 * does not speak https, a redirect that has no port 80 to answer on, or a per-port setting that
 * contradicts a Service-wide one is refused, naming annotation and value.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { parseGoBool } from "../../../../lib/go_bool.ts";
import { trimAscii } from "../../../../lib/ascii_space.ts";
import { quoteValue } from "../../../../lib/quote_value.ts";
import { CHOICES, INTEGERS, PATTERNS, SECRET_NAME, STATUS_CODE } from "./annotation_rules.ts";
import { TLS_SECRET_ANNOTATION } from "../../names.ts";

/** Every per-port annotation starts so: `service.deno-ccm.io/port-443-protocol`. */
export const PORT_ANNOTATION_PREFIX = "service.deno-ccm.io/port-";
/** The full name of a port's setting. */
export const portAnnotation = (port: number, setting: PortSetting) =>
  `${PORT_ANNOTATION_PREFIX}${port}-${setting}`;
/** A per-port key: the port (1–65535, no leading zero) and the setting. */
export const PORT_KEY = /^service\.deno-ccm\.io\/port-([1-9][0-9]{0,4})-([a-z-]+)$/;

/** The settings a port may have, each read like the official CCM's annotation of the same name. */
export const PORT_SETTINGS = [
  "protocol",
  "http-certificates",
  "certificate-type",
  "http-redirect-http",
  "uses-proxyprotocol",
  "health-check-protocol",
  "health-check-port",
  "health-check-http-path",
  "http-status-codes",
  "tls-secret",
] as const;
/** One of {@link PORT_SETTINGS}. */
export type PortSetting = (typeof PORT_SETTINGS)[number];

/** What one port overrides; `undefined`: as the Service-wide annotations say. */
export interface PortSettings {
  /** `tcp`, `http` or `https` for this port. */
  protocol?: "tcp" | "http" | "https";
  /** Uploaded certificates by name or ID. */
  certificates?: string[];
  /** `managed`: the Service's managed certificate (`http-managed-certificate-*`). */
  certificateType?: "uploaded" | "managed";
  /** A TLS Secret in the Service's namespace (tls_secrets.ts). */
  tlsSecret?: string;
  /** Port 80 redirects to this https port. */
  redirectHttp?: boolean;
  /** This port's targets receive the PROXY protocol header. */
  proxyProtocol?: boolean;
  /** This port's health-check settings. */
  healthCheck: {
    protocol?: "tcp" | "http" | "https";
    port?: number;
    httpPath?: string;
    httpStatusCodes?: string[];
  };
}

/** What the Service-wide annotations say, as far as the checks across annotations need it. */
export interface ServiceWide {
  protocol: "tcp" | "http" | "https";
  certificateType: "uploaded" | "managed";
  certificates: string[];
  managedCertificateDomains: string[];
  redirectHttp?: boolean;
  /** `attach-to`: the balancer is shared with what its maker put there. */
  attachTo?: string;
  /** `service.deno-ccm.io/tls-secret`. */
  tlsSecret?: string;
}

/** The per-port settings by port, and every problem (annotation and value named). */
export interface ParsedPorts {
  ports: Map<number, PortSettings>;
  errors: string[];
  /** Full names of the annotations with a refused value. */
  invalid: Set<string>;
}

/** Reads and checks the Service's per-port annotations against its ports and the Service-wide ones. */
export function parsePortSettings(
  service: Service,
  wide: ServiceWide,
  tlsSecretsEnabled = false,
): ParsedPorts {
  const errors: string[] = [];
  const invalid = new Set<string>();
  const ports = new Map<number, PortSettings>();
  const fail = (key: string, value: string, why: string) => {
    invalid.add(key);
    errors.push(`annotation ${key}: ${quoteValue(value)} ${why}`);
  };
  const tcpPorts = new Set(
    (service.spec?.ports ?? []).filter((p) => (p.protocol ?? "TCP") === "TCP").map((p) => p.port),
  );
  for (const [key, value] of Object.entries(service.metadata?.annotations ?? {})) {
    if (!key.startsWith(PORT_ANNOTATION_PREFIX)) continue;
    const m = PORT_KEY.exec(key);
    const setting = m?.[2] as PortSetting | undefined;
    if (!m || !PORT_SETTINGS.includes(setting!)) {
      fail(
        key,
        value,
        `is not a per-port setting: the name must be ${PORT_ANNOTATION_PREFIX}<port>-<setting>, ` +
          `the setting one of ${PORT_SETTINGS.join(", ")}`,
      );
      continue;
    }
    const port = Number(m[1]);
    if (!tcpPorts.has(port)) {
      fail(key, value, `names port ${port}, which is not a TCP port of this Service`);
      continue;
    }
    const s = ports.get(port) ?? { healthCheck: {} };
    ports.set(port, s);
    readSetting(s, setting!, value, (why) => fail(key, value, why));
  }
  checkAcross(ports, tcpPorts, wide, fail, service.metadata?.annotations ?? {});
  checkTlsSecrets(ports, wide, tlsSecretsEnabled, fail);
  return { ports, errors, invalid };
}

/** One setting's value into `s`, or `fail` with why it is refused. */
function readSetting(
  s: PortSettings,
  setting: PortSetting,
  value: string,
  fail: (why: string) => void,
): void {
  const choice = <N extends keyof typeof CHOICES>(name: N) => {
    const lower = value.toLowerCase();
    const choices: readonly string[] = CHOICES[name];
    if (choices.includes(lower)) return lower as (typeof CHOICES)[N][number];
    fail(`is not one of ${choices.join(", ")}`);
  };
  const bool = () => {
    const parsed = parseGoBool(value);
    if (parsed === undefined) fail("is not a boolean (true or false)");
    return parsed;
  };
  const list = () => value.split(",").map(trimAscii).filter(Boolean);
  switch (setting) {
    case "protocol":
      s.protocol = choice("protocol");
      return;
    case "http-certificates":
      s.certificates = list();
      if (!s.certificates.length) fail("names no certificate");
      return;
    case "certificate-type":
      s.certificateType = choice("certificate-type");
      return;
    case "http-redirect-http":
      s.redirectHttp = bool();
      return;
    case "uses-proxyprotocol":
      s.proxyProtocol = bool();
      return;
    case "health-check-protocol":
      s.healthCheck.protocol = choice("health-check-protocol");
      return;
    case "health-check-port": {
      const [min, max] = INTEGERS["health-check-port"];
      if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
        fail(`is not an integer between ${min} and ${max}`);
      } else s.healthCheck.port = Number(value);
      return;
    }
    case "health-check-http-path": {
      const rule = PATTERNS["health-check-http-path"];
      if (!rule.pattern.test(value) || value.length > (rule.maxLength ?? Infinity)) {
        fail(`is not a valid ${rule.what}`);
      } else s.healthCheck.httpPath = value;
      return;
    }
    case "tls-secret":
      if (!SECRET_NAME.pattern.test(value) || value.length > SECRET_NAME.maxLength) {
        fail(`is not a valid ${SECRET_NAME.what}`);
      } else s.tlsSecret = value;
      return;
    case "http-status-codes": {
      const codes = list();
      const bad = codes.find((c) => !STATUS_CODE.test(c));
      if (bad !== undefined || !codes.length) fail('is not a list of status codes like "200" or "2??"');
      else s.healthCheck.httpStatusCodes = codes;
      return;
    }
  }
}

/** What only the settings together can tell: certificates need https, a redirect needs port 80. */
function checkAcross(
  ports: Map<number, PortSettings>,
  tcpPorts: Set<number>,
  wide: ServiceWide,
  fail: (key: string, value: string, why: string) => void,
  annotations: Record<string, string>,
): void {
  const said = (port: number, setting: PortSetting) => {
    const key = portAnnotation(port, setting);
    return [key, annotations[key] ?? ""] as const;
  };
  const redirects: number[] = [];
  for (const [port, s] of ports) {
    const protocol = s.protocol ?? wide.protocol;
    for (const setting of ["http-certificates", "certificate-type", "tls-secret"] as const) {
      const given = setting === "http-certificates"
        ? s.certificates
        : setting === "tls-secret"
        ? s.tlsSecret
        : s.certificateType;
      if (given !== undefined && protocol !== "https") {
        fail(...said(port, setting), `needs protocol https on port ${port}, which speaks ${protocol}`);
      }
    }
    if (s.certificates && s.certificateType === "managed") {
      fail(
        ...said(port, "certificate-type"),
        `contradicts ${portAnnotation(port, "http-certificates")} (set one)`,
      );
    }
    if (s.certificateType === "managed" && !wide.managedCertificateDomains.length) {
      fail(
        ...said(port, "certificate-type"),
        "needs load-balancer.hetzner.cloud/http-managed-certificate-domains (the Service's managed certificate)",
      );
    }
    const serviceCertificates = wide.certificateType === "managed" || wide.certificates.length > 0 ||
      wide.tlsSecret !== undefined;
    const own = s.certificates !== undefined || s.certificateType !== undefined || s.tlsSecret !== undefined;
    if (s.tlsSecret !== undefined && (s.certificates !== undefined || s.certificateType !== undefined)) {
      fail(...said(port, "tls-secret"), `contradicts port ${port}'s other certificate settings (set one)`);
    }
    if (s.protocol === "https" && !own && !serviceCertificates) {
      fail(
        ...said(port, "protocol"),
        `names no certificate for port ${port}: set ${portAnnotation(port, "http-certificates")}, ` +
          `${portAnnotation(port, "tls-secret")}, ${portAnnotation(port, "certificate-type")}: managed, ` +
          "or load-balancer.hetzner.cloud/http-certificates",
      );
    }
    if (s.healthCheck.protocol === "tcp" && (s.healthCheck.httpPath || s.healthCheck.httpStatusCodes)) {
      fail(
        ...said(port, "health-check-protocol"),
        "checks TCP, so a path or status codes on this port mean nothing",
      );
    }
    if (!s.redirectHttp) continue;
    redirects.push(port);
    if (protocol !== "https") {
      fail(
        ...said(port, "http-redirect-http"),
        `needs protocol https on port ${port}, which speaks ${protocol}`,
      );
    } else if (port === 80) {
      fail(
        ...said(port, "http-redirect-http"),
        "redirects port 80 to HTTPS, so port 80 cannot be the HTTPS port",
      );
    } else if (!tcpPorts.has(80)) {
      fail(
        ...said(port, "http-redirect-http"),
        "answers plain HTTP on port 80, which this Service does not have: add port 80 to the Service",
      );
    } else if (ports.has(80)) {
      fail(...said(port, "http-redirect-http"), "takes port 80, which has settings of its own (remove them)");
    }
    if (wide.attachTo !== undefined) {
      fail(
        ...said(port, "http-redirect-http"),
        "would take port 80 of a balancer made outside Kubernetes (attach-to), which is not this Service's",
      );
    }
    if (wide.redirectHttp !== undefined) {
      fail(
        ...said(port, "http-redirect-http"),
        "contradicts load-balancer.hetzner.cloud/http-redirect-http (set one)",
      );
    }
  }
  if (redirects.length > 1) {
    fail(...said(redirects[1], "http-redirect-http"), `port ${redirects[0]} redirects port 80 already`);
  }
}

/**
 * TLS Secrets: a valid name, only when the operator enabled reading them, and the Service-wide one
 * not beside the official CCM's certificate annotations (one source of certificates per port).
 */
function checkTlsSecrets(
  ports: Map<number, PortSettings>,
  wide: ServiceWide,
  enabled: boolean,
  fail: (key: string, value: string, why: string) => void,
): void {
  const named: [string, string][] = [...ports].filter(([, s]) => s.tlsSecret !== undefined)
    .map(([port, s]) => [portAnnotation(port, "tls-secret"), s.tlsSecret!]);
  if (wide.tlsSecret !== undefined) {
    named.push([TLS_SECRET_ANNOTATION, wide.tlsSecret]);
    if (!SECRET_NAME.pattern.test(wide.tlsSecret) || wide.tlsSecret.length > SECRET_NAME.maxLength) {
      fail(TLS_SECRET_ANNOTATION, wide.tlsSecret, `is not a valid ${SECRET_NAME.what}`);
    } else if (wide.certificates.length || wide.certificateType === "managed") {
      fail(
        TLS_SECRET_ANNOTATION,
        wide.tlsSecret,
        "contradicts load-balancer.hetzner.cloud/http-certificates or certificate-type managed (set one)",
      );
    }
  }
  if (enabled) return;
  for (const [key, value] of named) {
    fail(
      key,
      value,
      "needs the operator to let the CCM read TLS Secrets (HCLOUD_LOAD_BALANCERS_TLS_SECRETS=true; chart: " +
        "tlsSecrets.enabled)",
    );
  }
}

/** Names of the TLS Secrets `spec` takes certificates from (valid names only), Service-wide and per port. */
export function tlsSecretNames(spec: { ports: Map<number, PortSettings>; tlsSecret?: string }): string[] {
  const names = new Set<string>();
  if (spec.tlsSecret && SECRET_NAME.pattern.test(spec.tlsSecret)) names.add(spec.tlsSecret);
  for (const s of spec.ports.values()) if (s.tlsSecret) names.add(s.tlsSecret);
  return [...names];
}

/** The port whose HTTPS service answers port 80 with a redirect (so port 80 gets no service of its own). */
export function redirectPort(ports: Map<number, PortSettings>): number | undefined {
  for (const [port, s] of ports) if (s.redirectHttp) return port;
  return undefined;
}
