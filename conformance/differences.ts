/**
 * The differences from the official CCM that the suite accepts, each matched by a precise rule: the
 * field (a path pattern) and the cases it applies to (named, or described by what the case sets
 * up). `intentional` rows are better for users and are listed in the README ("Differences from the
 * official CCM"); `open` rows are known and not fixed yet: they are reported, never hidden.
 *
 * @module
 */
import type { Case, ServiceSpec } from "./case_file.ts";
import type { Difference } from "./compare.ts";
import { LB_ANNOTATION_PREFIX, parseLoadBalancerSpec, SERVICE_UID_LABEL } from "../providers/hcloud/mod.ts";
import { parseGoBool } from "../lib/go_bool.ts";

/** One accepted difference. */
export interface ListedDifference {
  id: string;
  kind: "intentional" | "open";
  /** What users see, for the README table. */
  summary: string;
  /** Why it is better for users (intentional), or what is missing (open). */
  reason: string;
  /** Which cases: a description for the README, and the rule. */
  cases: string;
  appliesTo: (c: Case) => boolean;
  /** Which fields. */
  path: RegExp;
  /** Which phases (default: every phase). */
  phase?: RegExp;
  /** A further check on the two values, where the path alone would say too little. */
  values?: (expected: unknown, actual: unknown) => boolean;
  /** A further check on the difference in its case (which object it is about). */
  which?: (c: Case, d: Difference) => boolean;
}

const PREFIX = LB_ANNOTATION_PREFIX;
/** What a refused takeover leaves different: the balancer as it was, no ingress, the failure event. */
const TAKEOVER_PATHS =
  /^(load_balancers\[[^\]]+\]\.(labels\[[^\]]+\]|services\[\d+\]|target_servers|targets|private_ip_by_server\[[^\]]+\])|services\.[^.]+\.ingress|warning_events\[Service\/[^/]+\/SyncLoadBalancerFailed\])$/;
const services = (c: Case) => [
  ...(c.services ?? []),
  ...(c.steps ?? []).flatMap((s) =>
    s.action === "create_service" && typeof s.service === "object" ? [s.service] : []
  ),
];

/**
 * The annotations ours refuses on this Service before any change to the cloud (with the case's env), by
 * name without prefix: what the parser refuses, `use-private-ip` without a network, a certificate
 * name the case does not seed.
 */
export function refusedAnnotations(c: Case, s: ServiceSpec): Set<string> {
  const env = c.env ?? {};
  const { invalid } = parseLoadBalancerSpec(
    { metadata: { annotations: s.annotations ?? {} } },
    { enabled: true, disablePrivateIngress: false, usePrivateIp: false, disableIpv6: false },
  );
  const usePrivateIp = s.annotations?.[`${PREFIX}use-private-ip`] ??
    env.HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP;
  if (usePrivateIp !== undefined && parseGoBool(usePrivateIp) && !env.HCLOUD_NETWORK) {
    invalid.add("use-private-ip");
  }
  // An uploaded certificate the seed does not have: refused (and retried) when it is looked up.
  const seeded = new Set((c.seed.certificates ?? []).map((cert) => cert.name));
  const named = (s.annotations?.[`${PREFIX}http-certificates`] ?? "").split(",").map((n) => n.trim())
    .filter(Boolean);
  const https = s.annotations?.[`${PREFIX}protocol`]?.toLowerCase() === "https";
  const missing = named.some((n) => !/^\d+$/.test(n) && !seeded.has(n.replace(/^\$\{cert:([^}]+)\}$/, "$1")));
  if (https && s.annotations?.[`${PREFIX}certificate-type`] !== "managed" && missing) {
    invalid.add("http-certificates");
  }
  return invalid;
}

/** Non-open source ranges, from the field or (when it is empty) the annotation, as upstream reads them. */
function restrictedRanges(s: ServiceSpec): boolean {
  const field = (s.spec?.loadBalancerSourceRanges as string[] | undefined) ?? [];
  const ranges = field.length
    ? field
    : (s.annotations?.["service.beta.kubernetes.io/load-balancer-source-ranges"] ?? "").split(",");
  return ranges.map((r) => r.trim()).filter(Boolean).some((r) => r !== "0.0.0.0/0" && r !== "::/0");
}

/** The paths of one Service's balancer, ingress and failure event. */
function servicePaths(s: ServiceSpec): RegExp {
  const lb = (s.annotations?.[`${PREFIX}name`] ?? `<default-name:${s.name}>`).replace(
    /[.*+?^${}()|[\]\\]/g,
    "\\$&",
  );
  return new RegExp(
    `^(load_balancers\\[${lb}\\]|services\\.${s.name}\\.ingress|warning_events\\[Service\\/${s.name}\\/SyncLoadBalancerFailed\\])$`,
  );
}

/** A Service ours makes no balancer for: restricted sources on a public balancer, or nothing to serve. */
function cannotServe(c: Case, s: ServiceSpec): boolean {
  const disabled = s.annotations?.[`${PREFIX}disable-public-network`] ??
    c.env?.HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK;
  const publicNet = !(disabled !== undefined && parseGoBool(disabled));
  const tcp = s.ports.some((p) => (p.protocol ?? "TCP") === "TCP");
  return (restrictedRanges(s) && publicNet) || !tcp || s.spec?.allocateLoadBalancerNodePorts === false;
}

/** The `name` annotations two or more of the case's Services give (each its own Service's, say). */
function namedTwice(c: Case): Set<string> {
  const counts = new Map<string, number>();
  for (const s of services(c)) {
    const name = s.annotations?.[`${PREFIX}name`];
    if (name !== undefined) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, n]) => n > 1).map(([name]) => name));
}

/** Whether a Node of the case runs on a server the case leaves out of `HCLOUD_NETWORK`. */
function nodeOutsideNetwork(c: Case): boolean {
  const network = c.env?.HCLOUD_NETWORK;
  if (!network) return false;
  const nodes = new Set((c.nodes ?? []).map((n) => n.name));
  return (c.seed.servers ?? []).some((s) =>
    nodes.has(s.name) && !(s.private_net ?? []).some((p) => p.network === network)
  );
}

/** Annotations whose values HCCM does not check (or checks less) and ours does. */
const STRICTER = new Set([
  "name",
  "location",
  "network-zone",
  "type",
  "hostname",
  "ipv4-rdns",
  "ipv6-rdns",
  "health-check-http-domain",
  "http-managed-certificate-domains",
  "http-cookie-name",
  "health-check-http-path",
  "http-status-codes",
  "health-check-http-status-codes",
  "health-check-interval",
  "health-check-timeout",
  "health-check-retries",
  "health-check-port",
  "http-timeout-idle",
  "private-ipv4",
]);

/** Annotations HCCM reads as Go durations, where ours also takes bare seconds. */
const DURATIONS = [
  "http-cookie-lifetime",
  "http-timeout-idle",
  "health-check-interval",
  "health-check-timeout",
];

/** The table. */
export const LISTED_DIFFERENCES: ListedDifference[] = [
  {
    id: "cluster-id-label",
    kind: "intentional",
    summary:
      "Load balancers we create or adopt also carry the label `deno-ccm/cluster-id=<kube-system UID>`.",
    reason:
      "A load balancer created by a request still in flight when the CCM crashed is found and deleted " +
      "(HCCM leaks it), and only this cluster's balancers are ever swept.",
    cases: "every case with a LoadBalancer Service",
    appliesTo: (c) => services(c).some((s) => (s.type ?? "LoadBalancer") === "LoadBalancer"),
    path: /^load_balancers\[[^\]]+\]\.labels\[deno-ccm\/cluster-id\]$/,
    values: (expected, actual) => expected === null && actual === "<cluster-id>",
  },
  {
    id: "service-identity-labels",
    kind: "intentional",
    summary: "Load balancers and managed certificates we create or take over also carry the labels " +
      "`deno-ccm/service-namespace` and `deno-ccm/service-name` of their Service.",
    reason: "Once that Service is gone, only a Service of the same namespace and name takes the object " +
      "over by its name; HCCM lets any Service of any namespace take it (issue 33, probe N6).",
    cases: "every case with a LoadBalancer Service",
    appliesTo: (c) => services(c).some((s) => (s.type ?? "LoadBalancer") === "LoadBalancer"),
    path: /^(load_balancers|certificates)\[[^\]]+\]\.labels\[deno-ccm\/service-(namespace|name)\]$/,
    values: (expected, actual) =>
      expected === null && typeof actual === "string" && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(actual),
  },
  {
    id: "etp-local-health-check",
    kind: "intentional",
    summary: "`externalTrafficPolicy: Local` without health-check annotations: HTTP `/healthz` on " +
      "`spec.healthCheckNodePort` instead of TCP on the NodePort.",
    reason:
      "kube-proxy answers there only on Nodes with a ready endpoint, so the balancer sends traffic only " +
      "where it is served and drains a Node before its last Pod goes (as the cloud CCMs of GCP and AWS do).",
    cases: "cases with an `externalTrafficPolicy: Local` Service without health-check annotations",
    appliesTo: (c) =>
      services(c).some((s) =>
        s.externalTrafficPolicy === "Local" &&
        !Object.keys(s.annotations ?? {}).some((k) => k.startsWith(`${PREFIX}health-check-`))
      ),
    path: /^load_balancers\[[^\]]+\]\.services\[\d+\]\.health_check\.(protocol|port|http)$/,
  },
  {
    id: "bad-input-creates-nothing",
    kind: "intentional",
    summary: "A refused annotation value leaves no load balancer. HCCM reads each annotation where it uses " +
      "it, so it creates the balancer first and stops at the value: without services or targets (a " +
      "services or target setting: an unparsable duration, a missing certificate, `use-private-ip` without " +
      "a network), or with them but no ingress (`ipv6-disabled`, `disable-private-ingress`, read last). " +
      "Both report `SyncLoadBalancerFailed` and the warnings HCCM gives before it reaches the value.",
    reason:
      "Every value is checked before the first cloud call, so bad input changes nothing in the cloud and " +
      "bills nothing, and the event names every bad annotation value at once.",
    cases: "cases whose Service has an annotation value that both refuse, and where HCCM made a balancer " +
      "for it anyway (the outcome of every other field must still match)",
    appliesTo: (c) => services(c).some((s) => refusedAnnotations(c, s).size > 0),
    path: /^load_balancers\[[^\]]+\]$/,
    values: (expected, actual) => actual === null && !!expected && typeof expected === "object",
    // Only the balancer of a Service with a refused value.
    which: (c, d) =>
      services(c).some((s) =>
        refusedAnnotations(c, s).size > 0 &&
        d.path === `load_balancers[${s.annotations?.[`${PREFIX}name`] ?? `<default-name:${s.name}>`}]`
      ),
  },
  {
    id: "stricter-values",
    kind: "intentional",
    summary:
      "Values HCCM passes to the API unchecked are checked first and refused with a Warning naming the " +
      "annotation and value: names and DNS names (`name`, `location`, `network-zone`, `type`, `hostname`, " +
      "`ipv4-rdns`/`ipv6-rdns`, `health-check-http-domain`, managed-certificate domains), the cookie name, the " +
      "health-check path and status codes, the documented ranges (health-check interval 3–60 s, timeout 1–60 s, " +
      "retries 0–5, port 1–65535, `http-timeout-idle` 30–300 s) and `private-ipv4`. The Service has no " +
      "balancer and no ingress, where HCCM's balancer may have been made with the value.",
    reason: "A value the API or its documentation does not allow fails later and less clearly (a balancer " +
      "left half made), or works in a way nobody documented; refused early it changes nothing and says why.",
    cases: "cases whose Service has such a value outside what ours accepts",
    appliesTo: (c) => services(c).some((s) => [...refusedAnnotations(c, s)].some((a) => STRICTER.has(a))),
    path: /^(services\.[^.]+\.ingress|warning_events\[Service\/[^/]+\/SyncLoadBalancerFailed\])$/,
    which: (c, d) =>
      services(c).some((s) =>
        [...refusedAnnotations(c, s)].some((a) => STRICTER.has(a)) && servicePaths(s).test(d.path)
      ),
  },
  {
    id: "adopt-needs-opt-in",
    kind: "intentional",
    summary:
      "A same-named load balancer without an owner label (made outside Kubernetes) is not taken over " +
      'unless the Service says `adopt-existing: "true"`; the Service gets `SyncLoadBalancerFailed` naming the ' +
      "balancer, and the balancer is left as it is.",
    reason:
      "With HCCM any Service can take over any balancer by naming it, replace its services and targets and " +
      "delete it with the Service. Balancers HCCM created carry the UID label and are found as before.",
    cases: "cases whose Service names a seeded balancer that has no `hcloud-ccm/service-uid` label",
    appliesTo: (c) =>
      services(c).some((s) => {
        const name = s.annotations?.[`${PREFIX}name`];
        const seeded = (c.seed.load_balancers ?? []).find((lb) => lb.name === name);
        return !!seeded && !seeded.labels?.[SERVICE_UID_LABEL] &&
          s.annotations?.[`${PREFIX}adopt-existing`] !== "true";
      }),
    path: TAKEOVER_PATHS,
  },
  {
    id: "duration-bare-seconds",
    kind: "intentional",
    summary:
      "The duration annotations (`http-cookie-lifetime`, `http-timeout-idle`, `health-check-interval`, " +
      "`health-check-timeout`) also take bare seconds (`300`); HCCM parses them as Go durations only, rejects " +
      "a bare number and leaves a balancer without services.",
    reason:
      "The API's own unit is seconds and HCCM's annotation docs call these values seconds (the health-check " +
      "ones `int`); a value every user reads the same way should work rather than take the Service down.",
    cases: "cases where one of those annotations is a bare number",
    appliesTo: (c) =>
      services(c).some((s) => DURATIONS.some((d) => /^\d+$/.test(s.annotations?.[`${PREFIX}${d}`] ?? ""))),
    path:
      /^(load_balancers\[[^\]]+\]\.(services\[\d+\]|target_servers|private_ip_by_server\[[^\]]+\])|services\.[^.]+\.ingress|warning_events\[Service\/[^/]+\/SyncLoadBalancerFailed\])$/,
  },
  {
    id: "health-check-https",
    kind: "intentional",
    summary:
      "A health check asked to speak `https` (`health-check-protocol: https`, or an `https` Service with " +
      "another health-check setting, where the check takes the Service's protocol) is sent as the API's " +
      "HTTP check with `tls: true`; HCCM sends `https`, which the API refuses (`health_check.protocol` must " +
      "be tcp or http), and leaves a balancer without services or targets.",
    reason:
      "The API has no `https` health check: an HTTP check over TLS is what the value means, so the Service " +
      "works instead of failing on every sync. `health-check-http-validate-certificate` still decides " +
      "whether the certificate is checked.",
    cases: "cases whose Service asks for an `https` health check, explicitly or through its protocol",
    appliesTo: (c) =>
      services(c).some((s) => {
        const a = s.annotations ?? {};
        const hc = a[`${PREFIX}health-check-protocol`]?.toLowerCase();
        const otherHc = Object.keys(a).some((k) =>
          k.startsWith(`${PREFIX}health-check-`) && k !== `${PREFIX}health-check-protocol`
        ) || Object.keys(c.env ?? {}).some((k) =>
          k.startsWith("HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_")
        );
        return hc === "https" ||
          (hc === undefined && a[`${PREFIX}protocol`]?.toLowerCase() === "https" && otherHc);
      }),
    path:
      /^(load_balancers\[[^\]]+\]\.(services\[\d+\]|target_servers|private_ip_by_server\[[^\]]+\])|services\.[^.]+\.ingress|warning_events\[Service\/[^/]+\/SyncLoadBalancerFailed\])$/,
  },
  {
    id: "unenforceable-fields-named",
    kind: "intentional",
    summary: "What a Hetzner balancer cannot do is named in a Warning on the Service: " +
      "`UnsupportedLoadBalancerSourceRanges`, `UnsupportedLoadBalancerIP`, `NothingToServe` (no TCP port, or " +
      "`allocateLoadBalancerNodePorts: false`) and `UnknownAnnotation` (a `load-balancer.hetzner.cloud/` name " +
      "we do not know); HCCM ignores all of them silently.",
    reason: "A setting that has no effect should not look as if it had one: source ranges that are not " +
      "enforced are a security surprise, and a mistyped annotation otherwise goes unnoticed.",
    cases: "cases whose Service sets one of those fields or an unknown annotation",
    appliesTo: () => true,
    path:
      /^warning_events\[Service\/[^/]+\/(UnsupportedLoadBalancerSourceRanges|UnsupportedLoadBalancerIP|NothingToServe|UnknownAnnotation)\]$/,
    values: (expected, actual) => !expected && actual === true,
  },
  {
    id: "no-balancer-that-cannot-serve",
    kind: "intentional",
    summary:
      "No balancer is created for a Service that restricts its sources (`spec.loadBalancerSourceRanges`, " +
      "or the `service.beta.kubernetes.io/load-balancer-source-ranges` annotation when the field is empty) on " +
      "a public balancer, or that leaves it nothing to serve; the Service gets `SyncLoadBalancerFailed` and no " +
      "ingress. HCCM creates a public balancer open to every source, or one without services.",
    reason: "A public balancer open to all would silently defeat the ranges the Service asks for, and one " +
      "that serves nothing is billed for nothing; a private balancer (`disable-public-network`) is created.",
    cases: "cases whose Service has non-open source ranges on a public balancer, no TCP port, or " +
      "`allocateLoadBalancerNodePorts: false`",
    appliesTo: (c) => services(c).some((s) => cannotServe(c, s)),
    path:
      /^(load_balancers\[[^\]]+\]|services\.[^.]+\.ingress|warning_events\[Service\/[^/]+\/SyncLoadBalancerFailed\])$/,
    which: (c, d) => services(c).some((s) => cannotServe(c, s) && servicePaths(s).test(d.path)),
  },
  {
    id: "node-init-events",
    kind: "intentional",
    summary:
      "A Node that cannot be initialized gets a Warning saying why: `InstanceNotFound` when no server " +
      "matches (by provider ID, name or node IP, naming what was looked for), `UnsupportedNode` when its provider " +
      "ID is not one this CCM serves (another cloud's, or Robot's with Robot support off). It stays " +
      "uninitialized in both; HCCM only logs the error.",
    reason: "The Node's own events are where an operator looks when it keeps its uninitialized taint; with " +
      "HCCM the reason is only in the CCM's log.",
    cases: "cases with a Node that no server matches or whose provider ID this CCM does not serve",
    appliesTo: () => true,
    path: /^warning_events\[Node\/[^/]+\/(InstanceNotFound|UnsupportedNode)\]$/,
    values: (expected, actual) => !expected && actual === true,
  },
  {
    id: "foreign-owner-needs-opt-in",
    kind: "intentional",
    summary:
      "A same-named load balancer whose `hcloud-ccm/service-uid` names a Service that is not in this cluster, " +
      "and that lacks this cluster's `deno-ccm/cluster-id` (another cluster's CCM made it), is not taken over " +
      'unless the Service says `adopt-existing: "true"`; the Service gets `SyncLoadBalancerFailed` naming the ' +
      "balancer and why, and the balancer is left as it is.",
    reason:
      "An owner label is written by whoever holds the project's token: with HCCM a tenant takes over another " +
      "cluster's balancer by naming it (security probe P11). This cluster's own balancers carry its mark and " +
      "are taken over by a recreated Service as before.",
    cases: "cases whose Service names a seeded balancer labelled for a Service that is not one of the case's",
    appliesTo: (c) =>
      services(c).some((s) => {
        const name = s.annotations?.[`${PREFIX}name`];
        const owner = (c.seed.load_balancers ?? []).find((lb) => lb.name === name)?.labels
          ?.[SERVICE_UID_LABEL];
        return owner !== undefined && !/^\$\{uid:[^}]+\}$/.test(owner) &&
          s.annotations?.[`${PREFIX}adopt-existing`] !== "true";
      }),
    path: TAKEOVER_PATHS,
  },
  {
    id: "dual-stack-cluster-cidr-routes",
    kind: "intentional",
    summary:
      "With a dual-stack `--cluster-cidr` (an IPv4 and an IPv6 range), the Nodes' IPv4 pod ranges are routed " +
      "through the Network and the IPv6 ones skipped with an `IPv6RouteSkipped` event; HCCM makes no route at all.",
    reason:
      "Hetzner Networks carry IPv4 only, but the IPv4 half of a dual-stack cluster needs its routes as a " +
      "single-stack one does; without them pods on different Nodes cannot reach each other over IPv4.",
    cases: "cases with a dual-stack `--cluster-cidr`",
    appliesTo: (c) =>
      (c.flags ?? []).some((f) => f.startsWith("--cluster-cidr=") && f.includes(",") && f.includes(":")),
    path:
      /^(routes(\.|\[|$).*|nodes\[[^\]]+\]\.networkUnavailable|warning_events\[Node\/[^/]+\/IPv6RouteSkipped\])$/,
  },
  {
    id: "node-selector-follows-labels",
    kind: "intentional",
    summary:
      "A Node relabelled into or out of a Service's `node-selector` is added to or removed from its balancer's " +
      "targets; HCCM keeps the targets it had until the Service itself changes.",
    reason:
      "A node selector says which Nodes serve; a Node that starts or stops matching it should start or stop " +
      "receiving traffic, as one that joins or leaves the cluster does.",
    cases: "cases whose Service has a `node-selector` and a step that relabels a Node",
    appliesTo: (c) =>
      services(c).some((s) => s.annotations?.[`${PREFIX}node-selector`] !== undefined) &&
      (c.steps ?? []).some((s) => s.action === "label_node"),
    path: /^load_balancers\[[^\]]+\]\.(target_servers|targets|private_ip_by_server\[[^\]]+\])$/,
  },
  {
    id: "one-name-first-service-keeps",
    kind: "intentional",
    summary: "Two Services naming one balancer (`load-balancer.hetzner.cloud/name`, without sharing): the " +
      "balancer stays the first Service's, and the later one gets `SyncLoadBalancerFailed` and no ingress. HCCM " +
      "hands the balancer to the later Service (its ports and owner label become the later one's), and " +
      "deleting the later Service deletes the balancer the first still serves.",
    reason:
      "A name is something any tenant can write: with HCCM one Service takes another namespace's balancer " +
      "(and its public IP) by naming it (security probes N6, P11). Sharing one balancer is asked for with " +
      "`load-balancer-share` instead.",
    cases: "cases in which two Services give the same `name` annotation (ours: `ours-hostile-name`)",
    appliesTo: (c) => namedTwice(c).size > 0,
    path:
      /^(load_balancers\[[^\]]+\](\..+)?|services\.[^.]+\.ingress|warning_events\[Service\/[^/]+\/SyncLoadBalancerFailed\])$/,
    which: (c, d) => {
      const names = namedTwice(c);
      const balancer = /^load_balancers\[([^\]]+)\]/.exec(d.path)?.[1];
      if (balancer !== undefined) return names.has(balancer);
      return services(c).some((s) =>
        names.has(s.annotations?.[`${PREFIX}name`] ?? "") && servicePaths(s).test(d.path)
      );
    },
  },
  {
    id: "node-outside-network-settles",
    kind: "intentional",
    summary:
      "A Node whose server is not attached to `HCLOUD_NETWORK`: the same state as HCCM's (initialized, no " +
      "InternalIP, no route, `NetworkUnavailable` True, `FailedToCreateRoute`), but ours says so once and " +
      "settles; HCCM retries the route for ever, so it never settles.",
    reason:
      "Retrying cannot help until the server is attached, which changes the Node's addresses and brings a " +
      "new attempt anyway; a retry loop only spends the project's API budget and repeats the event.",
    cases: "cases with a Node on a server outside `HCLOUD_NETWORK` (ours: `ours-node-not-in-network`)",
    appliesTo: nodeOutsideNetwork,
    path: /^converged$/,
    values: (expected, actual) => expected === false && actual === true,
  },
];

/** The listed difference that accepts `d` in case `c`, if any. */
export function listedFor(c: Case, d: Difference): ListedDifference | undefined {
  return LISTED_DIFFERENCES.find((l) =>
    l.appliesTo(c) && l.path.test(d.path) && (!l.phase || l.phase.test(d.phase)) &&
    (!l.values || l.values(d.expected, d.actual)) && (!l.which || l.which(c, d))
  );
}
