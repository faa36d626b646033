/**
 * One line of reference per annotation the CCM reads or writes: who writes it, its default, how it
 * relates to the official CCM (HCCM) and what it does. The values each annotation may hold are not
 * repeated here: the page takes them from annotation_rules.ts, the table the parser and the admission
 * policy are made from. A `Record` over the official names, so an annotation added to
 * {@link ANNOTATIONS} without its line does not compile; docs/reference/annotations.md is generated
 * from it (`deno task manifests`) and a test fails when the page drifts or an annotation the code
 * reads has no line.
 *
 * @module
 */
import { ANNOTATIONS } from "./hccm_stage.ts";
import {
  BOOLS,
  CHOICES,
  DURATIONS,
  HOSTNAMES,
  INTEGERS,
  OTHERS,
  OUR_BOOLS,
  PATTERNS,
  SECRET_NAME,
  WHOLE_BALANCER,
} from "./annotation_rules.ts";
import { PORT_SETTINGS } from "./port_settings.ts";
import { PREFIX } from "./annotations.ts";
import {
  ADDRESS_OVERRIDES,
  CO_MANAGED_STATE,
  EXTERNAL_IPV6_ANNOTATION,
  INGRESS_FAMILIES_ANNOTATION,
  KUBE_PROXY_HEALTH_CHECK_ANNOTATION,
  LB_LABELS_ANNOTATION,
  SHARE_ANNOTATION,
  SHARED_STATE,
  TLS_SECRET_ANNOTATION,
} from "../../names.ts";

/** Who writes an annotation: the threat model's writers. */
export type Writer = "tenant" | "kubelet" | "ccm" | "operator";

/** What each writer is called on the page. */
const WRITER: Record<Writer, string> = {
  tenant: "namespace tenant (Service)",
  kubelet: "kubelet (its Node)",
  ccm: "the CCM (a writer of the object can overwrite it; see the threat model)",
  operator: "operator (a kubelet can set it on its own Node)",
};

/** One annotation's reference line. */
export interface AnnotationReference {
  /** The default when the annotation is absent ("" when absent means off or unset). */
  default: string;
  /** What it does, one or two sentences. */
  meaning: string;
  /** How it relates to the official CCM. */
  hccm: string;
  writer?: Writer;
}

const SAME = "same name and meaning as HCCM";
const CHECKED = "same name; ours checks the value before any cloud call";
const OURS = "deno-ccm only";
const env = (name: string) => `\`HCLOUD_LOAD_BALANCERS_${name}\``;

/** The official annotations (`load-balancer.hetzner.cloud/<name>`), in HCCM's documentation order. */
export const SERVICE_ANNOTATION_REFERENCE: Record<(typeof ANNOTATIONS)[number], AnnotationReference> = {
  name: { default: '"a" + the Service UID', meaning: "The balancer's name.", hccm: CHECKED },
  location: { default: env("LOCATION"), meaning: "Location of a new balancer.", hccm: CHECKED },
  "network-zone": { default: env("NETWORK_ZONE"), meaning: "Network zone of a new balancer.", hccm: CHECKED },
  type: { default: env("TYPE") + ", else lb11", meaning: "Balancer type (size).", hccm: CHECKED },
  "algorithm-type": {
    default: env("ALGORITHM_TYPE") + ", else the API's round_robin",
    meaning: "Algorithm.",
    hccm: SAME,
  },
  "disable-public-network": {
    default: env("DISABLE_PUBLIC_NETWORK"),
    meaning: "No public interface.",
    hccm: SAME,
  },
  "ipv6-disabled": { default: env("DISABLE_IPV6"), meaning: "No IPv6 address in the ingress.", hccm: SAME },
  "disable-private-ingress": {
    default: env("DISABLE_PRIVATE_INGRESS"),
    meaning: "No private address in the ingress.",
    hccm: SAME,
  },
  "use-private-ip": {
    default: env("USE_PRIVATE_IP"),
    meaning: "Targets are reached through the network (needs HCLOUD_NETWORK).",
    hccm: SAME,
  },
  "private-ipv4": { default: "", meaning: "The balancer's address in the network.", hccm: CHECKED },
  "private-subnet-ip-range": {
    default: env("PRIVATE_SUBNET_IP_RANGE"),
    meaning: "Subnet the balancer's private address comes from.",
    hccm: SAME,
  },
  hostname: { default: "", meaning: "Ingress hostname instead of addresses.", hccm: CHECKED },
  protocol: { default: "tcp", meaning: "Protocol of every port.", hccm: SAME },
  "uses-proxyprotocol": {
    default: env("USES_PROXYPROTOCOL"),
    meaning: "Send the PROXY header; ingress `ipMode: Proxy`.",
    hccm: SAME,
  },
  "node-selector": {
    default: "",
    meaning: "Only Nodes matching this label selector are targets; followed as labels change.",
    hccm: "same name; HCCM reads it once (its #519)",
  },
  "http-cookie-name": { default: "", meaning: "Sticky-session cookie name.", hccm: CHECKED },
  "http-cookie-lifetime": {
    default: "",
    meaning: "Sticky-session cookie lifetime.",
    hccm: "same; bare seconds too",
  },
  "http-timeout-idle": {
    default: "",
    meaning: "Idle timeout of HTTP connections.",
    hccm: "same; bare seconds too",
  },
  "certificate-type": { default: "uploaded", meaning: "Certificates of https ports.", hccm: SAME },
  "http-certificates": {
    default: "",
    meaning: "Uploaded certificates (IDs or names) for https ports; another owner's need consent.",
    hccm: "same name; another owner's refused without consent",
  },
  "http-managed-certificate-name": { default: "", meaning: "Name of the managed certificate.", hccm: SAME },
  "http-managed-certificate-domains": {
    default: "",
    meaning: "Domains of the managed certificate.",
    hccm: CHECKED,
  },
  "http-managed-certificate-acme-staging": { default: "", meaning: "Not used by the API.", hccm: SAME },
  "http-redirect-http": { default: "false", meaning: "Redirect port 80 to https.", hccm: SAME },
  "http-sticky-sessions": { default: "false", meaning: "Sticky sessions.", hccm: SAME },
  "health-check-protocol": {
    default: "the port's protocol",
    meaning: "Health-check protocol (https: HTTP with TLS).",
    hccm: "same; https works (HCCM's is refused by the API)",
  },
  "health-check-port": { default: "the NodePort", meaning: "Health-check port.", hccm: SAME },
  "health-check-interval": {
    default: env("HEALTH_CHECK_INTERVAL") + ", else the API's 15s",
    meaning: "Health-check interval.",
    hccm: "same; bare seconds too",
  },
  "health-check-timeout": {
    default: env("HEALTH_CHECK_TIMEOUT") + ", else the API's 10s",
    meaning: "Health-check timeout.",
    hccm: "same; bare seconds too",
  },
  "health-check-retries": {
    default: env("HEALTH_CHECK_RETRIES") + ", else the API's 3",
    meaning: "Health-check retries.",
    hccm: SAME,
  },
  "health-check-http-domain": { default: "", meaning: "Host header of HTTP checks.", hccm: CHECKED },
  "health-check-http-path": { default: "the API's (/)", meaning: "Path of HTTP checks.", hccm: CHECKED },
  "health-check-http-validate-certificate": {
    default: "false",
    meaning: "Verify the target's certificate (TLS checks).",
    hccm: SAME,
  },
  "health-check-http-status-codes": {
    default: "",
    meaning: "Our earlier name of http-status-codes, still read.",
    hccm: OURS,
  },
  "http-status-codes": {
    default: "the API's (2??, 3??)",
    meaning: "Status codes an HTTP check accepts.",
    hccm: CHECKED,
  },
  "ipv4-rdns": { default: "", meaning: "Reverse DNS of the IPv4 address.", hccm: CHECKED },
  "ipv6-rdns": { default: "", meaning: "Reverse DNS of the IPv6 address.", hccm: CHECKED },
  "protection-delete": {
    default: "false",
    meaning: "Delete protection: the balancer stays when the Service goes.",
    hccm: OURS,
  },
  "adopt-existing": {
    default: "false",
    meaning: "Take over a same-named balancer made outside Kubernetes (with consent).",
    hccm: "ours: HCCM takes any same-named balancer",
  },
  "public-net-ipv4": {
    default: "",
    meaning: "Primary IPv4 (ID) of a new balancer.",
    hccm: "HCCM after v1.37",
  },
  "public-net-ipv6": {
    default: "",
    meaning: "Primary IPv6 (ID) of a new balancer.",
    hccm: "HCCM after v1.37",
  },
  "attach-to": {
    default: "",
    meaning: "Add the Service's ports to a balancer made outside Kubernetes (co-managed).",
    hccm: OURS,
  },
  ipv4: { default: "", meaning: "Not read.", hccm: "HCCM writes it; ours ignores it" },
  ipv6: { default: "", meaning: "Not read.", hccm: "HCCM writes it; ours ignores it" },
  id: { default: "", meaning: "Not read.", hccm: "HCCM writes it; ours ignores it" },
};

/** Our annotations on Services and Nodes, by full name. */
export const OWN_ANNOTATION_REFERENCE: Record<string, AnnotationReference> = {
  [LB_LABELS_ANNOTATION]: {
    default: "",
    meaning: "Labels (`k=v,…`, at most 10) on the Service's balancer; the operator's win on a key.",
    hccm: OURS,
    writer: "tenant",
  },
  [KUBE_PROXY_HEALTH_CHECK_ANNOTATION]: {
    default: "`HCLOUD_LOAD_BALANCERS_KUBE_PROXY_HEALTH_CHECK`",
    meaning: "Health-check kube-proxy's /healthz (10256) for `externalTrafficPolicy: Cluster`.",
    hccm: OURS,
    writer: "tenant",
  },
  [INGRESS_FAMILIES_ANNOTATION]: {
    default: "`HCLOUD_LOAD_BALANCERS_INGRESS_FOLLOWS_IP_FAMILIES`",
    meaning:
      "The ingress lists only the balancer's addresses of the Service's `spec.ipFamilies`, in that order.",
    hccm: "ours: HCCM lists every address",
    writer: "tenant",
  },
  [TLS_SECRET_ANNOTATION]: {
    default: "",
    meaning: "A labelled `kubernetes.io/tls` Secret of the namespace for every https port " +
      "(needs `HCLOUD_LOAD_BALANCERS_TLS_SECRETS`).",
    hccm: OURS,
    writer: "tenant",
  },
  [SHARE_ANNOTATION]: {
    default: "",
    meaning: "Services of one namespace naming the same key share one balancer.",
    hccm: OURS,
    writer: "tenant",
  },
  "service.deno-ccm.io/port-<port>-<setting>": {
    default: "the Service-wide value",
    meaning: `One port's own setting: ${PORT_SETTINGS.join(", ")}.`,
    hccm: OURS,
    writer: "tenant",
  },
  "service.deno-ccm.io/confirm-recreate": {
    default: "",
    meaning: '"true" recreates a balancer while the missing-balancer breaker holds recreation.',
    hccm: OURS,
    writer: "tenant",
  },
  [CO_MANAGED_STATE]: {
    default: "",
    meaning:
      "What the Service owns on a co-managed balancer, sealed with an HMAC (a forged one counts as none).",
    hccm: OURS,
    writer: "ccm",
  },
  [SHARED_STATE]: {
    default: "",
    meaning: "The share key of the balancer the Service serves on.",
    hccm: OURS,
    writer: "ccm",
  },
  [EXTERNAL_IPV6_ANNOTATION]: {
    default: "",
    meaning: "Replaces the Node's derived IPv6 ExternalIP.",
    hccm: "HCCM v1.37's",
    writer: "kubelet",
  },
  [ADDRESS_OVERRIDES.InternalIP]: {
    default: "",
    meaning: "Replaces the Node's InternalIPs (comma-separated, up to 8).",
    hccm: OURS,
    writer: "kubelet",
  },
  [ADDRESS_OVERRIDES.ExternalIP]: {
    default: "",
    meaning: "Replaces the Node's ExternalIPs (comma-separated, up to 8).",
    hccm: OURS,
    writer: "kubelet",
  },
  "alpha.kubernetes.io/provided-node-ip": {
    default: "",
    meaning: "The kubelet's `--node-ip`: matches a Node whose name matches no server.",
    hccm: "Kubernetes'; HCCM does not match by it",
    writer: "kubelet",
  },
  "node.deno-ccm.io/synced-labels": {
    default: "",
    meaning: "The server labels the CCM copied onto the Node.",
    hccm: OURS,
    writer: "ccm",
  },
  "node.deno-ccm.io/synced-taints": {
    default: "",
    meaning: "The taints the CCM made from server labels.",
    hccm: OURS,
    writer: "ccm",
  },
  "node.deno-ccm.io/confirm-deletion": {
    default: "",
    meaning: '"true" deletes a serverless Node while Node deletions are held.',
    hccm: OURS,
    writer: "operator",
  },
  "service.beta.kubernetes.io/load-balancer-source-ranges": {
    default: "",
    meaning: "Read as `spec.loadBalancerSourceRanges` is: named unsupported (no firewall).",
    hccm: "Kubernetes'; HCCM ignores it",
    writer: "tenant",
  },
};

/** What a `load-balancer.hetzner.cloud/` annotation may hold, from the rules table. */
export function allowedValues(name: string): string {
  const range = (r: readonly [number, number]) =>
    r[1] === Number.MAX_SAFE_INTEGER ? `a whole number ≥ ${r[0]}` : `${r[0]}–${r[1]}`;
  if ((BOOLS as readonly string[]).includes(name)) return "true or false (Go's ParseBool)";
  if (name in CHOICES) return (CHOICES as Record<string, readonly string[]>)[name].join(", ");
  if (name in DURATIONS) {
    const r = (DURATIONS as Record<string, readonly [number, number] | undefined>)[name];
    return `a duration (Go syntax or whole seconds)${r ? `, ${r[0]}–${r[1]} s` : ""}`;
  }
  if (name in INTEGERS) return range((INTEGERS as Record<string, readonly [number, number]>)[name]);
  if (name in PATTERNS) return `a ${(PATTERNS as Record<string, { what: string }>)[name].what}`;
  if (name in HOSTNAMES) return `a DNS name (${(HOSTNAMES as Record<string, string>)[name]})`;
  if (name in OTHERS) return (OTHERS as Record<string, string>)[name];
  return "";
}

/** docs/reference/annotations.md. */
export function annotationsPage(): string {
  const cell = (text: string) => text.replaceAll("|", "\\|");
  const code = (text: string) => (text && !text.includes("`") ? `\`${cell(text)}\`` : cell(text));
  const official = ANNOTATIONS.map((name) => {
    const r = SERVICE_ANNOTATION_REFERENCE[name];
    const whole = (WHOLE_BALANCER as readonly string[]).includes(name) ? " Refused with `attach-to`." : "";
    return `| \`${name}\` | ${code(r.default)} | ${cell(allowedValues(name))} | ${
      cell(r.meaning)
    }${whole} | ${r.hccm} |`;
  });
  const own = Object.entries(OWN_ANNOTATION_REFERENCE).map(([name, r]) =>
    `| \`${name}\` | ${WRITER[r.writer!]} | ${code(r.default)} | ${cell(r.meaning)} | ${r.hccm} |`
  );
  return [
    "# Annotations",
    "",
    "Generated from `providers/hcloud/load_balancers/spec/annotation_reference.ts` and the rules table",
    "`annotation_rules.ts` beside it (the one the parser and the admission policy are made from) by",
    "`deno task manifests`; edit those, not this page. Who may write each, and what that lets them do:",
    "[the threat model](../explanation/threat-model.md).",
    "",
    `## Service annotations \`${PREFIX}<name>\``,
    "",
    "Written by the namespace tenant (anyone who may edit the Service). A value outside what is allowed is a",
    "`SyncLoadBalancerFailed` Warning naming annotation and value, and nothing changes in the cloud. Booleans",
    `also: ${OUR_BOOLS.map((b) => `\`${b}\``).join(", ")}; \`${TLS_SECRET_ANNOTATION}\` holds a`,
    `${SECRET_NAME.what} of at most ${SECRET_NAME.maxLength} characters.`,
    "",
    "| Annotation | Default | Allowed values | What it does | Relation to the official CCM |",
    "| --- | --- | --- | --- | --- |",
    ...official,
    "",
    "## Our annotations, on Services and Nodes",
    "",
    "| Annotation | Written by | Default | What it does | Relation to the official CCM |",
    "| --- | --- | --- | --- | --- |",
    ...own,
    "",
  ].join("\n");
}
