/**
 * The registry of the official Service annotations (`load-balancer.hetzner.cloud/<name>`): one entry
 * each, in HCCM's documentation order, with the stage of HCCM's sync that reads it and its reference
 * line. What its value may hold is its rules-table entry (annotation_rules.ts: a test fails when an
 * annotation is in none or two). Derived from the two: the parser's checks, the admission policy, the
 * unknown-annotation warning, the refusal's companion warnings (`earliestStage`), the annotation
 * samples' skeleton and docs/reference/annotations.md. Adding an annotation: an entry here, one in
 * the rules table, and its meaning in the parser.
 *
 * @module
 */
import { HccmStage } from "./hccm_stage.ts";

/** One official annotation: where HCCM reads it, and its reference line. */
export interface AnnotationEntry {
  /** Where HCCM reads it (ours only: where it would matter to HCCM's order). */
  stage: HccmStage;
  /** The default when the annotation is absent ("" when absent means off or unset). */
  default: string;
  /** What it does, one or two sentences. */
  meaning: string;
  /** How it relates to the official CCM. */
  hccm: string;
}

const SAME = "same name and meaning as HCCM";
const CHECKED = "same name; ours checks the value before any cloud call";
const OURS = "deno-ccm only";
const env = (name: string) => `\`HCLOUD_LOAD_BALANCERS_${name}\``;

/** See the module doc. */
export const SERVICE_ANNOTATIONS = {
  name: {
    stage: HccmStage.Create,
    default: '"a" + the Service UID',
    meaning: "The balancer's name.",
    hccm: CHECKED,
  },
  location: {
    stage: HccmStage.Create,
    default: env("LOCATION"),
    meaning: "Location of a new balancer.",
    hccm: CHECKED,
  },
  "network-zone": {
    stage: HccmStage.Create,
    default: env("NETWORK_ZONE"),
    meaning: "Network zone of a new balancer.",
    hccm: CHECKED,
  },
  type: {
    stage: HccmStage.Create,
    default: env("TYPE") + ", else lb11",
    meaning: "Balancer type (size).",
    hccm: CHECKED,
  },
  "algorithm-type": {
    stage: HccmStage.Create,
    default: env("ALGORITHM_TYPE") + ", else the API's round_robin",
    meaning: "Algorithm.",
    hccm: SAME,
  },
  "disable-public-network": {
    stage: HccmStage.Create,
    default: env("DISABLE_PUBLIC_NETWORK"),
    meaning: "No public interface.",
    hccm: SAME,
  },
  "ipv6-disabled": {
    stage: HccmStage.Ingress,
    default: env("DISABLE_IPV6"),
    meaning: "No IPv6 address in the ingress.",
    hccm: SAME,
  },
  "disable-private-ingress": {
    stage: HccmStage.Ingress,
    default: env("DISABLE_PRIVATE_INGRESS"),
    meaning: "No private address in the ingress.",
    hccm: SAME,
  },
  "use-private-ip": {
    stage: HccmStage.Targets,
    default: env("USE_PRIVATE_IP"),
    meaning: "Targets are reached through the network (needs HCLOUD_NETWORK).",
    hccm: SAME,
  },
  "private-ipv4": {
    stage: HccmStage.Balancer,
    default: "",
    meaning: "The balancer's address in the network.",
    hccm: CHECKED,
  },
  "private-subnet-ip-range": {
    stage: HccmStage.Balancer,
    default: env("PRIVATE_SUBNET_IP_RANGE"),
    meaning: "Subnet the balancer's private address comes from.",
    hccm: SAME,
  },
  hostname: {
    stage: HccmStage.Ingress,
    default: "",
    meaning: "Ingress hostname instead of addresses.",
    hccm: CHECKED,
  },
  protocol: { stage: HccmStage.Services, default: "tcp", meaning: "Protocol of every port.", hccm: SAME },
  "uses-proxyprotocol": {
    stage: HccmStage.Services,
    default: env("USES_PROXYPROTOCOL"),
    meaning: "Send the PROXY header; ingress `ipMode: Proxy`.",
    hccm: SAME,
  },
  "node-selector": {
    stage: HccmStage.NodeSelector,
    default: "",
    meaning: "Only Nodes matching this label selector are targets; followed as labels change.",
    hccm: "same name; HCCM reads it once (its #519)",
  },
  "http-cookie-name": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Sticky-session cookie name.",
    hccm: CHECKED,
  },
  "http-cookie-lifetime": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Sticky-session cookie lifetime.",
    hccm: "same; bare seconds too",
  },
  "http-timeout-idle": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Idle timeout of HTTP connections.",
    hccm: "same; bare seconds too",
  },
  "certificate-type": {
    stage: HccmStage.Services,
    default: "uploaded",
    meaning: "Certificates of https ports.",
    hccm: SAME,
  },
  "http-certificates": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Uploaded certificates (IDs or names) for https ports; another owner's need consent.",
    hccm: "same name; another owner's refused without consent",
  },
  "http-managed-certificate-name": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Name of the managed certificate.",
    hccm: SAME,
  },
  "http-managed-certificate-domains": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Domains of the managed certificate.",
    hccm: CHECKED,
  },
  "http-managed-certificate-acme-staging": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Not used by the API.",
    hccm: SAME,
  },
  "http-redirect-http": {
    stage: HccmStage.Services,
    default: "false",
    meaning: "Redirect port 80 to https.",
    hccm: SAME,
  },
  "http-sticky-sessions": {
    stage: HccmStage.Services,
    default: "false",
    meaning: "Sticky sessions.",
    hccm: SAME,
  },
  "health-check-protocol": {
    stage: HccmStage.Services,
    default: "the port's protocol",
    meaning: "Health-check protocol (https: HTTP with TLS).",
    hccm: "same; https works (HCCM's is refused by the API)",
  },
  "health-check-port": {
    stage: HccmStage.Services,
    default: "the NodePort",
    meaning: "Health-check port.",
    hccm: SAME,
  },
  "health-check-interval": {
    stage: HccmStage.Services,
    default: env("HEALTH_CHECK_INTERVAL") + ", else the API's 15s",
    meaning: "Health-check interval.",
    hccm: "same; bare seconds too",
  },
  "health-check-timeout": {
    stage: HccmStage.Services,
    default: env("HEALTH_CHECK_TIMEOUT") + ", else the API's 10s",
    meaning: "Health-check timeout.",
    hccm: "same; bare seconds too",
  },
  "health-check-retries": {
    stage: HccmStage.Services,
    default: env("HEALTH_CHECK_RETRIES") + ", else the API's 3",
    meaning: "Health-check retries.",
    hccm: SAME,
  },
  "health-check-http-domain": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Host header of HTTP checks.",
    hccm: CHECKED,
  },
  "health-check-http-path": {
    stage: HccmStage.Services,
    default: "the API's (/)",
    meaning: "Path of HTTP checks.",
    hccm: CHECKED,
  },
  "health-check-http-validate-certificate": {
    stage: HccmStage.Services,
    default: "false",
    meaning: "Verify the target's certificate (TLS checks).",
    hccm: SAME,
  },
  "health-check-http-status-codes": {
    stage: HccmStage.Services,
    default: "",
    meaning: "Our earlier name of http-status-codes, still read.",
    hccm: OURS,
  },
  "http-status-codes": {
    stage: HccmStage.Services,
    default: "the API's (2??, 3??)",
    meaning: "Status codes an HTTP check accepts.",
    hccm: CHECKED,
  },
  "ipv4-rdns": {
    stage: HccmStage.Balancer,
    default: "",
    meaning: "Reverse DNS of the IPv4 address.",
    hccm: CHECKED,
  },
  "ipv6-rdns": {
    stage: HccmStage.Balancer,
    default: "",
    meaning: "Reverse DNS of the IPv6 address.",
    hccm: CHECKED,
  },
  "protection-delete": {
    stage: HccmStage.Balancer,
    default: "false",
    meaning: "Delete protection: the balancer stays when the Service goes.",
    hccm: OURS,
  },
  "adopt-existing": {
    stage: HccmStage.Create,
    default: "false",
    meaning: "Take over a same-named balancer made outside Kubernetes (with consent).",
    hccm: "ours: HCCM takes any same-named balancer",
  },
  "public-net-ipv4": {
    stage: HccmStage.Create,
    default: "",
    meaning: "Primary IPv4 (ID) of a new balancer.",
    hccm: "HCCM after v1.37",
  },
  "public-net-ipv6": {
    stage: HccmStage.Create,
    default: "",
    meaning: "Primary IPv6 (ID) of a new balancer.",
    hccm: "HCCM after v1.37",
  },
  "attach-to": {
    stage: HccmStage.NodeSelector,
    default: "",
    meaning: "Add the Service's ports to a balancer made outside Kubernetes (co-managed).",
    hccm: OURS,
  },
  ipv4: {
    stage: HccmStage.Ingress,
    default: "",
    meaning: "Not read.",
    hccm: "HCCM writes it; ours ignores it",
  },
  ipv6: {
    stage: HccmStage.Ingress,
    default: "",
    meaning: "Not read.",
    hccm: "HCCM writes it; ours ignores it",
  },
  id: {
    stage: HccmStage.Ingress,
    default: "",
    meaning: "Without `attach-to` or a share key: co-manage the balancer with this ID, as `attach-to` does " +
      "(kube-hetzner's combined mode); whole-balancer annotations are then left to its maker, not refused.",
    hccm: "reserved and not read by HCCM; ours co-manages",
  },
} satisfies Record<string, AnnotationEntry>;

/** An official annotation's name (without prefix). */
export type AnnotationName = keyof typeof SERVICE_ANNOTATIONS;

/** Every official annotation name (without prefix), in HCCM's documentation order. */
export const ANNOTATIONS = Object.keys(SERVICE_ANNOTATIONS) as readonly AnnotationName[];

/** Known annotation names (without prefix), for documentation and unknown-annotation warnings. */
export const KNOWN_ANNOTATIONS: readonly string[] = ANNOTATIONS;

/** Where HCCM reads each annotation. */
export const HCCM_STAGE: Record<AnnotationName, HccmStage> = Object.fromEntries(
  ANNOTATIONS.map((name) => [name, SERVICE_ANNOTATIONS[name].stage]),
) as Record<AnnotationName, HccmStage>;

/** The stage of the earliest annotation in `invalid` (undefined: none refused). */
export function earliestStage(invalid: Iterable<string>): HccmStage | undefined {
  let earliest: HccmStage | undefined;
  for (const name of invalid) {
    const stage = HCCM_STAGE[name as AnnotationName] ?? HccmStage.Services;
    if (earliest === undefined || stage < earliest) earliest = stage;
  }
  return earliest;
}
