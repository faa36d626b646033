/**
 * docs/reference/annotations.md: the official annotations from their registry (registry.ts) with what
 * each may hold from the rules table (annotation_rules.ts, the one the parser and the admission policy
 * are made from), and one line for each annotation of ours the CCM reads or writes (who writes it, its
 * default, how it relates to the official CCM, what it does). `deno task manifests` writes the page; a
 * test fails when the page drifts or an annotation the code reads has no line.
 *
 * @module
 */
import { ANNOTATIONS, SERVICE_ANNOTATIONS } from "./registry.ts";
import {
  CHOICES,
  DURATIONS,
  HOSTNAMES,
  INTEGERS,
  OTHERS,
  OUR_BOOLS,
  PATTERNS,
  SECRET_NAME,
  valueKind,
  WHOLE_BALANCER,
} from "./annotation_rules.ts";
import { PORT_SETTINGS } from "./port_settings.ts";
import { PREFIX } from "./annotations.ts";
import {
  ADDRESS_OVERRIDES,
  CO_MANAGED_STATE,
  EXTERNAL_IPV6_ANNOTATION,
  FIREWALL_NODEPORTS_ANNOTATION,
  FIREWALL_SOURCE_RANGES_ANNOTATION,
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
  /** Who writes it (default: a namespace tenant). */
  writer?: Writer;
}

const OURS = "deno-ccm only";

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
  [FIREWALL_NODEPORTS_ANNOTATION]: {
    default: "false",
    meaning:
      "A NodePort Service opens its NodePorts in the cluster's firewall, from `service.deno-ccm.io/firewall-source-ranges` " +
      "or everywhere (needs `HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES` to name its namespace).",
    hccm: OURS,
    writer: "tenant",
  },
  [FIREWALL_SOURCE_RANGES_ANNOTATION]: {
    default: "everywhere (`0.0.0.0/0`, `::/0`)",
    meaning: "The CIDRs (`a,b,…`, at most 100) a NodePort Service opening its NodePorts lets in; " +
      "Kubernetes refuses `loadBalancerSourceRanges` on NodePort Services.",
    hccm: OURS,
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
  switch (valueKind(name)) {
    case "bool":
      return "true or false (Go's ParseBool)";
    case "choice":
      return (CHOICES as Record<string, readonly string[]>)[name].join(", ");
    case "duration": {
      const r = (DURATIONS as Record<string, readonly [number, number] | undefined>)[name];
      return `a duration (Go syntax or whole seconds)${r ? `, ${r[0]}–${r[1]} s` : ""}`;
    }
    case "integer":
      return range((INTEGERS as Record<string, readonly [number, number]>)[name]);
    case "pattern":
      return `a ${(PATTERNS as Record<string, { what: string }>)[name].what}`;
    case "hostname":
      return `a DNS name (${(HOSTNAMES as Record<string, string>)[name]})`;
    case "other":
      return (OTHERS as Record<string, string>)[name];
  }
  return "";
}

/** docs/reference/annotations.md. */
export function annotationsPage(): string {
  const cell = (text: string) => text.replaceAll("|", "\\|");
  const code = (text: string) => (text && !text.includes("`") ? `\`${cell(text)}\`` : cell(text));
  const official = ANNOTATIONS.map((name) => {
    const r = SERVICE_ANNOTATIONS[name];
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
    "Generated from `providers/hcloud/load_balancers/spec/registry.ts` (the official annotations), the rules",
    "table `annotation_rules.ts` beside it (the one the parser and the admission policy are made from) and",
    "`annotation_reference.ts` (ours) by `deno task manifests`; edit those, not this page. Who may write each,",
    "and what that lets them do:",
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
