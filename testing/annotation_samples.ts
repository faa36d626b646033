/**
 * Values for every Service annotation the CCM reads, valid and invalid, with the edges where a
 * regular expression and a parser could disagree (lengths, ranges, rounding, white space, case).
 * Which are valid is not written here: the CCM's parser says so (tests compare the admission
 * policy's verdict with it, sample by sample).
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import {
  FIREWALL_NODEPORTS_ANNOTATION,
  INGRESS_FAMILIES_ANNOTATION,
  KNOWN_ANNOTATIONS,
  KUBE_PROXY_HEALTH_CHECK_ANNOTATION,
  LB_LABELS_ANNOTATION,
  type LoadBalancerDefaults,
  nodePortOpenings,
  parseLoadBalancerSpec,
  PREFIX,
  valueKind,
} from "../providers/hcloud/mod.ts";

/** One sample: the annotations (names without prefix, or full names with a `/`). */
export interface AnnotationSample {
  annotations: Record<string, string>;
  /** Set when the policy is expected to let it through though the CCM refuses it: a key of POLICY_EXCEPTIONS. */
  lenient?: string;
}

const A63 = "a".repeat(63);
const HOST_253 = `${A63}.${A63}.${A63}.${"b".repeat(61)}`;

const BOOL = ["true", "false", "1", "0", "t", "F", "TRUE", "False", "yes", "on", "", " true", "tRUE"];
const DURATION = [
  "0",
  "00",
  "5",
  "015",
  "2",
  "3",
  "60",
  "61",
  "300",
  "301",
  "5s",
  "2.5s",
  "2.4999s",
  "2499ms",
  "2500ms",
  "1m",
  "1m0.5s",
  "1.5m",
  " 5s ",
  "\t10s\n",
  "5s\u00a0",
  "1h",
  "1.s",
  ".5s",
  "-5s",
  "+5s",
  "5S",
  "1e3s",
  "3000000µs",
  "3000000us",
  "3000000000ns",
  "5 s",
  "s",
  "60.4s",
  "60.5s",
  "300.4s",
  "300.5s",
  "29.5s",
  "29.4s",
  "0.5s",
  "0.49s",
  "000000000000000000030",
  "99999999999999999999",
  "10m",
  "forever",
];
const INTEGER = [
  "0",
  "1",
  "5",
  "6",
  "65535",
  "65536",
  "080",
  "-1",
  "1.0",
  " 1",
  "",
  "9007199254740991",
  "9007199254740992",
  "00000000000000000000001",
  "99999999999999999999",
  "http",
];
const HOSTNAME = [
  "example.com",
  "example.com.",
  "a",
  "-a.com",
  "a-.com",
  "a..com",
  "xn--bcher-kva.example",
  "a_b.com",
  "a b",
  "é.com",
  `${A63}.com`,
  `a${A63}.com`,
  HOST_253,
  `${HOST_253}.`,
  `${HOST_253}b`,
  "",
  ".",
  "lb\u0000.example.com",
];
const NAME = ["lb-1", "a", "-a", "a-", "a.b_c", A63, `${A63}a`, "", "a b", "LB"];
const ZONE = ["fsn1", "eu-central", "", "FSN1", "eu central", "fsn1 "];

/** The values every annotation of a generic kind (annotation_rules.ts) is tried with. */
const GENERIC: Partial<Record<string, string[]>> = {
  bool: BOOL,
  duration: DURATION,
  integer: INTEGER,
  hostname: HOSTNAME,
};

/** Values per annotation (names without prefix, or full names). */
const VALUES: Record<string, string[]> = {
  // The skeleton follows the rules table: every annotation of a generic kind gets that kind's edges.
  ...Object.fromEntries(
    KNOWN_ANNOTATIONS.flatMap((n) => {
      const generic = GENERIC[valueKind(n) ?? ""];
      return generic ? [[n, generic]] : [];
    }),
  ),
  "algorithm-type": ["round_robin", "LEAST_CONNECTIONS", "random", "", "round_robin "],
  protocol: ["tcp", "HTTP", "https", "udp", "", "TcP", "http\u212a"],
  "certificate-type": ["uploaded", "Uploaded", "stolen", ""],
  "health-check-protocol": ["tcp", "http", "HTTPS", "icmp", ""],
  name: NAME,
  "attach-to": ["123", "my-lb", "-x", "1 2", ""],
  location: ZONE,
  "network-zone": ZONE,
  type: ["lb11", "LB 11", "lb-21", ""],
  "http-cookie-name": ["HCLBSTICKY", "a;b", "my cookie", "a'b", "x".repeat(64), "x".repeat(65), "", "ü"],
  "health-check-http-path": [
    "/",
    "/healthz",
    "healthz",
    "/a b",
    `/${"x".repeat(1023)}`,
    `/${"x".repeat(1024)}`,
    "/é",
    "",
  ],
  "private-ipv4": [
    "10.0.0.1",
    "255.255.255.255",
    "256.0.0.1",
    "01.2.3.4",
    "1.2.3",
    "fd00::1",
    "10.0.0.1 ",
    "0.0.0.0",
  ],
  "private-subnet-ip-range": [
    "10.0.0.0/8",
    "10.0.0.1/8",
    "10.0.0.0/32",
    "10.0.0.0/33",
    "10.0.0.0/032",
    "10.0.0.0/08",
    "10.0.0.0/0",
    "10.0.0.0",
    "10.0.0.0/",
    "fd00::/8",
  ],
  "node-selector": [
    "a=b",
    "a==b",
    "a!=b",
    "a",
    "!a",
    "! a",
    "a in (b,c)",
    "a notin (b)",
    "a in ()",
    "a in (b, ,c)",
    "a in(b)",
    "a b",
    "a,",
    "a,,b",
    "",
    "a=b,c!=d",
    "example.com/role=worker",
    "a=b=c",
    "a in (b",
    "a in ((b))",
    "a = b",
    " a=b ",
    "a=b\u00a0",
    "-a=b",
    "a=-b",
    `${"x".repeat(64)}=b`,
    "k in (a b)",
    "kin (a)",
    "a!==b",
    "!a=b",
    "a),b",
    "a in (b),c notin (d,e),!f",
  ],
  "http-status-codes": ["200", "2??", "200,301", "200, 301 ,", "600", "20", "2xx", "200\u00a0", "", ","],
  "health-check-http-status-codes": ["200", "2??", "600", "2xx,200"],
  "http-managed-certificate-domains": [
    "example.com",
    "*.example.com",
    "example.com, *.example.com",
    "exa_mple..com",
    "*.",
    "**.a.com",
    "a.com,",
    "a.com\u00a0",
    "é.com",
    "",
  ],
  [LB_LABELS_ANNOTATION]: [
    "team=a",
    "team=a, env=prod",
    "team",
    "hcloud-ccm/x=1",
    "deno-ccm/y=2",
    "a=b=c",
    "k=",
    "=v",
    Array.from({ length: 10 }, (_, i) => `k${i}=v`).join(","),
    Array.from({ length: 11 }, (_, i) => `k${i}=v`).join(","),
    "example.com/team=a",
    "a/b/c=d",
    "a=b\u00a0",
    "",
  ],
  [KUBE_PROXY_HEALTH_CHECK_ANNOTATION]: BOOL,
  [FIREWALL_NODEPORTS_ANNOTATION]: BOOL,
  [INGRESS_FAMILIES_ANNOTATION]: BOOL,
  "http-certificates": ["a,b", "anything at all"],
  "http-managed-certificate-name": ["my cert"],
  "http-managed-certificate-acme-staging": ["yes", "true"],
  ipv4: ["x"],
  ipv6: ["x"],
  id: ["123", "x", "0", "-1", ""],
};

/** Samples that are left to the CCM on purpose (see POLICY_EXCEPTIONS). */
const LENIENT: AnnotationSample[] = [
  { annotations: { "private-subnet-ip-range": "fd00::/129" }, lenient: "private-subnet-ip-range" },
  { annotations: { "health-check-interval": "9999999999999h" }, lenient: "durations" },
  { annotations: { "node-selector": `a=${"b".repeat(4100)}` }, lenient: "long values" },
];

/** Rules across annotations. */
const CROSS: Record<string, string>[] = [
  { "certificate-type": "managed" },
  { "certificate-type": "MANAGED", "http-managed-certificate-domains": "a.com" },
  { "certificate-type": "managed", "http-managed-certificate-domains": " , " },
  { "certificate-type": "uploaded", "http-managed-certificate-domains": "" },
  { "attach-to": "lb", name: "x" },
  { "attach-to": "lb", "node-selector": "a=b", "ipv4-rdns": "a.example.com" },
  { "attach-to": "lb", hostname: "x.example.com", protocol: "http" },
  // kube-hetzner's combined mode: the balancer's own settings are its maker's, not refused.
  { id: "123", name: "x", location: "fsn1", type: "lb11", "algorithm-type": "round_robin" },
  { id: "123", "attach-to": "lb", name: "x" },
  { "public-net-ipv4": "5", "disable-public-network": "true" },
  { "public-net-ipv6": "7", "disable-public-network": "1" },
  { "public-net-ipv4": "5", "disable-public-network": "false" },
  { "public-net-ipv4": "0", "disable-public-network": "true" },
  { "http-status-codes": "200", "health-check-http-status-codes": "999" },
];

/** The ports of every sample Service: per-port settings name them. */
export const SAMPLE_PORTS: NonNullable<Service["spec"]>["ports"] = [
  { name: "http", port: 80, protocol: "TCP" },
  { name: "https", port: 443, protocol: "TCP" },
  { name: "dns", port: 53, protocol: "UDP" },
];

const PP = "service.deno-ccm.io/port-";
const TLS = "service.deno-ccm.io/tls-secret";
const SECRET_NAMES = [
  "web-tls",
  "a.b-c",
  "0",
  "Web",
  "-x",
  "x-",
  "",
  "a_b",
  " web",
  "x".repeat(253),
  "x".repeat(254),
];
/**
 * Per-port settings: each setting's values on port 443, with what the rules across settings need
 * to pass (https and a certificate), so only the value decides; then names and ports.
 */
const PORT_VALUES: [string, string[], Record<string, string>][] = [
  ["protocol", ["tcp", "http", "https", "HTTPS", "udp", "", " https"], { "http-certificates": "web" }],
  ["http-certificates", ["web", "web, 17", "17", "", " , ", "\u00a0"], { [`${PP}443-protocol`]: "https" }],
  ["certificate-type", ["uploaded", "managed", "Managed", "both", ""], {
    [`${PP}443-protocol`]: "https",
    "http-managed-certificate-domains": "example.com",
  }],
  ["http-redirect-http", BOOL, { [`${PP}443-protocol`]: "https", [`${PP}443-http-certificates`]: "web" }],
  ["uses-proxyprotocol", BOOL, {}],
  ["health-check-protocol", ["tcp", "http", "https", "TCP", "icmp", ""], {}],
  ["health-check-port", ["1", "8080", "65535", "65536", "0", "0080", "-1", "http", ""], {}],
  ["health-check-http-path", [
    "/",
    "/ready",
    "ready",
    "",
    "/a b",
    `/${"a".repeat(1023)}`,
    `/${"a".repeat(1024)}`,
  ], {}],
  ["http-status-codes", ["200", "2??,301", " 200 , 3?? ", "", ",", "20x", "600", "200,,"], {}],
  ["tls-secret", SECRET_NAMES, { [`${PP}443-protocol`]: "https" }],
];
const PORT_NAMES: Record<string, string>[] = [
  { [`${PP}443-protokol`]: "https" },
  { [`${PP}0443-protocol`]: "tcp" },
  { [`${PP}https-protocol`]: "tcp" },
  { [`${PP}8443-protocol`]: "tcp" },
  { [`${PP}53-protocol`]: "tcp" },
  { [`${PP}70000-protocol`]: "tcp" },
  { [`${PP}80-uses-proxyprotocol`]: "true" },
];
/** Rules across per-port settings: left to the CCM (it refuses them before any cloud call). */
const PORT_LENIENT: AnnotationSample[] = ([
  { [`${PP}443-http-certificates`]: "web" },
  { [`${PP}443-protocol`]: "https" },
  {
    [`${PP}80-http-redirect-http`]: "true",
    [`${PP}80-protocol`]: "https",
    [`${PP}80-http-certificates`]: "w",
  },
  { [`${PP}443-health-check-protocol`]: "tcp", [`${PP}443-health-check-http-path`]: "/x" },
] as Record<string, string>[]).map((annotations) => ({ annotations, lenient: "per-port combinations" }));

/** Every sample: one per value of each annotation, the rules across annotations, and the exceptions. */
export function annotationSamples(): AnnotationSample[] {
  return [
    ...Object.entries(VALUES).flatMap(([name, values]) =>
      values.map((v) => ({ annotations: { [name]: v } }))
    ),
    ...CROSS.map((annotations) => ({ annotations })),
    ...LENIENT,
    ...PORT_VALUES.flatMap(([setting, values, context]) =>
      values.map((v) => ({ annotations: { ...context, [`${PP}443-${setting}`]: v } }))
    ),
    ...PORT_NAMES.map((annotations) => ({ annotations })),
    ...SECRET_NAMES.map((v) => ({ annotations: { [TLS]: v } })),
    ...[
      { [TLS]: "web", "http-certificates": "c" },
      { [TLS]: "web", "http-certificates": " , " },
      { [TLS]: "web", "certificate-type": "managed", "http-managed-certificate-domains": "a.com" },
      { [TLS]: "Web", "http-certificates": "c" },
      { [TLS]: "web", [`${PP}443-protocol`]: "https", [`${PP}443-tls-secret`]: "api" },
    ].map((annotations) => ({ annotations })),
    ...PORT_LENIENT,
    ...SHARE_KEYS.map((v) => ({ annotations: { [SHARE]: v } })),
    ...[
      { [SHARE]: "web", "node-selector": "a=b" },
      { [SHARE]: "web", "attach-to": "lb" },
      { [SHARE]: "web", "adopt-existing": "true", "public-net-ipv4": "1" },
      { [SHARE]: "web", "public-net-ipv6": "2" },
      { [SHARE]: "web", type: "lb21", location: "nbg1", "algorithm-type": "least_connections" },
    ].map((annotations) => ({ annotations })),
  ];
}

const SHARE = "service.deno-ccm.io/load-balancer-share";
const SHARE_KEYS = [
  "web",
  "a-b",
  "0",
  "Web",
  "-x",
  "x-",
  "",
  "a_b",
  "a.b",
  " web",
  "x".repeat(40),
  "x".repeat(41),
];

/** The annotations (full names) the CCM's parser refuses in `sample`, with its messages. */
export function ccmVerdict(sample: AnnotationSample): { invalid: string[]; errors: string[] } {
  const annotations = Object.fromEntries(
    Object.entries(sample.annotations).map(([k, v]) => [k.includes("/") ? k : PREFIX + k, v]),
  );
  const { invalid, errors } = parseLoadBalancerSpec(
    { metadata: { uid: "u", annotations }, spec: { type: "LoadBalancer", ports: SAMPLE_PORTS } },
    NO_DEFAULTS,
  );
  // The firewall's annotation is read by the firewall room, on NodePort Services: its verdict too.
  const firewall = nodePortOpenings(
    [{ metadata: { name: "s", annotations }, spec: { type: "NodePort", ports: SAMPLE_PORTS } }],
    "*",
  ).refused.filter((r) => r.message.includes("is not true or false"));
  return {
    invalid: [
      ...[...invalid].map((n) => n === "labels" ? LB_LABELS_ANNOTATION : n.includes("/") ? n : PREFIX + n),
      ...firewall.length ? [FIREWALL_NODEPORTS_ANNOTATION] : [],
    ],
    errors: [...errors, ...firewall.map((r) => r.message)],
  };
}

/**
 * No `HCLOUD_LOAD_BALANCERS_*` defaults: the apiserver cannot see the CCM's environment. Reading TLS
 * Secrets is on, so their names are judged by value (off, the CCM refuses them all: a listed exception).
 */
const NO_DEFAULTS: LoadBalancerDefaults = {
  enabled: true,
  disablePrivateIngress: false,
  usePrivateIp: false,
  disableIpv6: false,
  tlsSecrets: true,
};
