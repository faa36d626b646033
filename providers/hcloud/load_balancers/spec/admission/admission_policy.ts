/**
 * The chart's ValidatingAdmissionPolicy, made from the annotation table (annotation_rules.ts) the
 * CCM's parser reads: a Service of type LoadBalancer whose `load-balancer.hetzner.cloud/*` (or our
 * `service.deno-ccm.io/load-balancer-labels`) annotation holds a value the CCM would refuse is
 * refused (or warned about) at `kubectl apply`, with the parser's message naming annotation and value.
 *
 * Only what a request changes is judged: an annotation whose value is the same as before passes, so
 * a Service that was already there (or written before the policy) can still be updated, and the
 * CCM's own writes (finalizers, its co-managed record) are never refused. Where the apiserver cannot
 * see what the CCM sees, the policy is more lenient, never stricter: {@link POLICY_EXCEPTIONS}.
 *
 * @module
 */
import { parseGoBoolSpellings } from "../../../../../lib/go_bool.ts";
import { ASCII_SPACE } from "../../../../../lib/ascii_space.ts";
import { KEY, VALUE } from "../../../../../lib/label_selector.ts";
import {
  LB_ANNOTATION_PREFIX,
  LB_LABELS_ANNOTATION,
  SHARE_ANNOTATION,
  TLS_SECRET_ANNOTATION,
} from "../../../names.ts";
import { NOT_WITH_SHARE, SHARE_KEY } from "../share_key.ts";
import {
  BOOLS,
  CHOICES,
  DURATION,
  DURATIONS,
  HOSTNAME_LABELS,
  HOSTNAMES,
  INTEGERS,
  IPV4,
  IPV4_CIDR,
  OUR_BOOLS,
  PATTERNS,
  SECRET_NAME,
  STATUS_CODE,
  WHOLE_BALANCER,
} from "../annotation_rules.ts";
import { MAX_SERVICE_LABELS, RESERVED } from "../user_labels.ts";
import { selectorPattern } from "../selector_pattern.ts";

/** Where the policy lets through what the CCM refuses (it is never stricter), and why. */
export const POLICY_EXCEPTIONS: Record<string, string> = {
  "private-subnet-ip-range": "IPv6 ranges are left to the CCM (Hetzner's private networks are IPv4, so the " +
    "CCM refuses them when it reaches the network)",
  "public-net-ipv4": "HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK is the CCM's environment, which the " +
    "apiserver cannot see: only the disable-public-network annotation is checked against a Primary IP",
  durations:
    "a duration beyond Go's limit (about 292 years) cannot be evaluated by CEL and is left to the CCM",
  "tls-secret":
    "whether the operator lets the CCM read TLS Secrets (HCLOUD_LOAD_BALANCERS_TLS_SECRETS) is the " +
    "CCM's environment, which the apiserver cannot see: the names are checked, the CCM refuses them when reading " +
    "Secrets is off",
  "per-port combinations":
    "rules across per-port settings (a certificate needs https, a redirect needs port " +
    "80, a path needs an HTTP check) are left to the CCM, which refuses them before any cloud call",
  "long values":
    `a node selector over ${4096} characters, or a list over ${8192}, is left to the CCM (CEL's ` +
    "cost limit)",
};

/** A quoted CEL string; raw, so a regular expression's backslashes pass unchanged. */
export function lit(text: string): string {
  if (!text.includes("'")) return `r'${text}'`;
  if (!text.includes('"')) return `r"${text}"`;
  throw new Error(`no CEL raw string can hold ${text}`);
}

/** A JavaScript pattern as RE2 runs it: refuses what RE2 lacks instead of silently differing. */
export function re2(pattern: RegExp): string {
  const source = pattern.source;
  if (/\(\?[=!<]|\\[1-9]|\\k</.test(source) || pattern.flags.replace(/[gy]/g, "")) {
    throw new Error(`pattern ${source} uses what RE2 lacks (look-around, back-references, flags)`);
  }
  for (const m of source.matchAll(/\{(\d+)(?:,(\d*))?\}/g)) {
    if (Number(m[1]) > 1000 || Number(m[2] || 0) > 1000) {
      throw new Error(`RE2 repeats at most 1000: ${source}`);
    }
  }
  return lit(source);
}

const A = "variables.a";
const OLD = "variables.old";
const NON_ASCII = lit("[^\\x00-\\x7f]");
const key = (name: string) => `'${name.includes("/") ? name : LB_ANNOTATION_PREFIX + name}'`;
const value = (name: string) => `${A}[${key(name)}]`;
const present = (name: string) => `${key(name)} in ${A}`;
const unchanged = (name: string) =>
  `(${key(name)} in ${OLD}) == (${present(name)}) && (!(${present(name)}) || ${OLD}[${key(name)}] == ${
    value(name)
  })`;
/** CEL quoting value `v` for a message as the parser does; no line break (the apiserver would drop the message). */
export const quoted = (v: string) =>
  `'"' + (${v}.size() > 64 ? ${v}.substring(0, 64) + '…' : ${v}).replace('\\n', '\\\\n').replace('\\r', '\\\\r') + '"'`;

/** Checks of a value `v`: CEL that is true when the CCM accepts it. */
export const check = {
  bool: (v: string) => `${v} in [${parseGoBoolSpellings().map((s) => `'${s}'`).join(", ")}]`,
  choice: (v: string, choices: readonly string[]) =>
    `${v}.lowerAscii() in [${choices.map((c) => `'${c}'`).join(", ")}]`,
  isDuration: (v: string) => `(${v}.matches(${re2(DURATION)}) || ${v}.matches('^[0-9]+$'))`,
  durationIn: (v: string, [lo, hi]: readonly [number, number]) =>
    // Rounded to whole seconds as the parser rounds: s >= lo ⇔ ms >= lo·1000 − 500, s <= hi ⇔ ms < hi·1000 + 500.
    `(${v}.matches(${re2(DURATION)}) && duration(${v}.trim()) >= duration('${lo * 1000 - 500}ms') && ` +
    `duration(${v}.trim()) < duration('${hi * 1000 + 500}ms')) || ` +
    `(${v}.matches('^0*[0-9]{1,15}$') && int(${v}) >= ${lo} && int(${v}) <= ${hi})`,
  int: (v: string, [min, max]: readonly [number, number]) =>
    `${v}.matches('^0*[0-9]{1,16}$') && int(${v}) >= ${min} && int(${v}) <= ${max}`,
  hostname: (v: string) =>
    `(${v}.size() <= 253 || (${v}.size() == 254 && ${v}.endsWith('.'))) && ${v}.matches(${
      re2(HOSTNAME_LABELS)
    })`,
  /** Entries of a comma-separated list as the parser sees them (ASCII-trimmed, empty ones dropped). */
  entries: (v: string) => `${v}.split(',').map(e, e.trim()).filter(e, e != '')`,
  /** Non-ASCII text in any entry: the parser keeps it (it trims ASCII space only) and refuses the entry. */
  asciiEntries: (v: string) => `${v}.split(',').all(e, !e.matches(${NON_ASCII}))`,
};

/** One validation: CEL over the annotations, and its message. */
export interface Validation {
  expression: string;
  messageExpression: string;
  /** Shown if the message cannot be evaluated. */
  message: string;
  reason: "Invalid";
}

/** A single-annotation rule: judged only when that annotation is new or changed. */
function single(name: string, ok: string, why: string, when?: string): Validation {
  const v = value(name);
  const skip = [`!(${present(name)})`, `(${key(name)} in ${OLD} && ${OLD}[${key(name)}] == ${v})`];
  if (when) skip.push(`!(${when})`);
  return {
    expression: `${skip.join(" || ")} || (${ok})`,
    messageExpression: `'annotation ${key(name).slice(1, -1)}: ' + ${quoted(v)} + ${why}`,
    message: `annotation ${key(name).slice(1, -1)} holds a value the CCM refuses`,
    reason: "Invalid",
  };
}

/** A rule over several annotations: judged when any of them is new or changed. */
function cross(names: readonly string[], ok: string, message: string): Validation {
  return {
    expression: `(${names.map(unchanged).join(" && ")}) || (${ok})`,
    messageExpression: message,
    message: `annotation ${key(names[0]).slice(1, -1)} cannot be combined with the others as they are`,
    reason: "Invalid",
  };
}

/** A message's literal tail, after the value. */
export const says = (text: string) => lit(` ${text}`);

/** Every validation, in the table's order. */
export function policyValidations(): Validation[] {
  const out: Validation[] = [];
  for (const name of [...BOOLS, ...OUR_BOOLS]) {
    out.push(single(name, check.bool(value(name)), says("is not a boolean (true or false)")));
  }
  for (const [name, choices] of Object.entries(CHOICES)) {
    out.push(single(name, check.choice(value(name), choices), says(`is not one of ${choices.join(", ")}`)));
  }
  for (const [name, range] of Object.entries(DURATIONS)) {
    const v = value(name);
    const ok = range ? check.durationIn(v, range) : check.isDuration(v);
    const why = range
      ? `(${check.isDuration(v)} ? ${says(`must be between ${range[0]}s and ${range[1]}s`)} : ` +
        `${says('is not a duration like "15s" or "1m"')})`
      : says('is not a duration like "15s" or "1m"');
    out.push(single(name, ok, why));
  }
  for (const [name, range] of Object.entries(INTEGERS)) {
    out.push(
      single(
        name,
        check.int(value(name), range),
        says(`is not an integer between ${range[0]} and ${range[1]}`),
      ),
    );
  }
  for (const [name, rule] of Object.entries(PATTERNS)) {
    const v = value(name);
    const ok = [
      ...(rule.maxLength ? [`${v}.size() <= ${rule.maxLength}`] : []),
      `${v}.matches(${re2(rule.pattern)})`,
    ].join(" && ");
    out.push(
      single(name, rule.emptyAllowed ? `${v} == '' || ${ok}` : ok, says(`is not a valid ${rule.what}`)),
    );
  }
  for (const [name, what] of Object.entries(HOSTNAMES)) {
    out.push(single(name, check.hostname(value(name)), says(`is not a valid ${what}`)));
  }
  out.push(
    single("private-ipv4", `${value("private-ipv4")}.matches(${re2(IPV4)})`, says("is not an IPv4 address")),
  );
  const range = value("private-subnet-ip-range");
  out.push(
    single(
      "private-subnet-ip-range",
      `${range}.contains(':') || ${range}.matches(${re2(IPV4_CIDR)})`,
      says("is not a CIDR range"),
    ),
  );
  const selector = value("node-selector");
  out.push(
    single(
      "node-selector",
      `${selector}.size() > 4096 || ${selector}.matches(${lit(selectorPattern())})`,
      says("is not a label selector"),
    ),
  );
  const code = lit(`^${ASCII_SPACE}*(${STATUS_CODE.source.slice(1, -1)})?${ASCII_SPACE}*$`);
  for (const name of ["http-status-codes", "health-check-http-status-codes"]) {
    const v = value(name);
    out.push(single(
      name,
      `${v}.size() > 8192 || ${v}.split(',').all(e, e.matches(${code}))`,
      says('holds a value that is not a status code like "200" or "2??"'),
      name === "health-check-http-status-codes" ? `!(${present("http-status-codes")})` : undefined,
    ));
  }
  const domains = value("http-managed-certificate-domains");
  out.push(single(
    "http-managed-certificate-domains",
    `${domains}.size() > 8192 || (${check.asciiEntries(domains)} && ${check.entries(domains)}` +
      `.map(e, e.startsWith('*.') ? e.substring(2) : e).all(h, ${check.hostname("h")}))`,
    says("holds a value that is not a domain name (or *.domain)"),
  ));
  const labels = value(LB_LABELS_ANNOTATION);
  const pair = "[e.substring(0, e.indexOf('=')).trim(), e.substring(e.indexOf('=') + 1).trim()]";
  out.push(single(
    LB_LABELS_ANNOTATION,
    `${labels}.size() > 8192 || (${check.asciiEntries(labels)} && ` +
      `${check.entries(labels)}.size() <= ${MAX_SERVICE_LABELS} && ${
        check.entries(labels)
      }.all(e, e.contains('=')) && ` +
      `${check.entries(labels)}.map(e, ${pair}).all(p, !p[0].matches(${
        re2(RESERVED)
      }) && p[0].size() <= 253 && ` +
      `p[0].matches(${re2(KEY)}) && p[1].matches(${re2(VALUE)})))`,
    says(
      `is not at most ${MAX_SERVICE_LABELS} labels key=value with valid keys and values, none under hcloud-ccm/ or deno-ccm/`,
    ),
  ));
  const tls = value(TLS_SECRET_ANNOTATION);
  const secretName = `${tls}.size() <= ${SECRET_NAME.maxLength} && ${tls}.matches(${
    re2(SECRET_NAME.pattern)
  })`;
  out.push(single(TLS_SECRET_ANNOTATION, secretName, says(`is not a valid ${SECRET_NAME.what}`)));
  // Rules across annotations, with the parser's messages.
  const managed = `${present("certificate-type")} && ${value("certificate-type")}.lowerAscii() == 'managed'`;
  out.push(cross(
    ["certificate-type", "http-managed-certificate-domains"],
    `!(${managed}) || (${
      present("http-managed-certificate-domains")
    } && ${domains}.split(',').exists(e, e.trim() != ''))`,
    lit(
      `annotation ${LB_ANNOTATION_PREFIX}http-managed-certificate-domains is required with certificate-type managed`,
    ),
  ));
  const blank = lit(`^${ASCII_SPACE}*$`);
  out.push(cross(
    [TLS_SECRET_ANNOTATION, "http-certificates", "certificate-type"],
    `!(${present(TLS_SECRET_ANNOTATION)}) || !(${secretName}) || (!(${present("http-certificates")} && ` +
      `${value("http-certificates")}.split(',').exists(e, !e.matches(${blank}))) && !(${managed}))`,
    `'annotation ${TLS_SECRET_ANNOTATION}: ' + ${quoted(tls)} + ${
      says("contradicts load-balancer.hetzner.cloud/http-certificates or certificate-type managed (set one)")
    }`,
  ));
  const whole = `[${WHOLE_BALANCER.map(key).join(", ")}]`;
  out.push(cross(
    ["attach-to", ...WHOLE_BALANCER],
    `!(${present("attach-to")}) || !${whole}.exists(k, k in ${A})`,
    `'annotation ${LB_ANNOTATION_PREFIX}attach-to: the balancer belongs to its maker, so ' + ` +
      `${whole}.filter(k, k in ${A}).join(', ') + ' cannot be set with it (targets and settings of the whole ` +
      `balancer are shared by everything it serves)'`,
  ));
  const share = value(SHARE_ANNOTATION);
  out.push(single(
    SHARE_ANNOTATION,
    `${share}.size() <= ${SHARE_KEY.maxLength} && ${share}.matches(${re2(SHARE_KEY.pattern)})`,
    says(`is not a valid ${SHARE_KEY.what}`),
  ));
  const notShared = `[${NOT_WITH_SHARE.map(key).join(", ")}]`;
  out.push(cross(
    [SHARE_ANNOTATION, ...NOT_WITH_SHARE],
    `!(${present(SHARE_ANNOTATION)}) || !${notShared}.exists(k, k in ${A})`,
    `'annotation ${SHARE_ANNOTATION}: the balancer is shared, so ' + ` +
      `${notShared}.filter(k, k in ${A}).join(', ') + ' cannot be set with it (a shared balancer targets the ` +
      `eligible Nodes of the cluster and is made by the CCM)'`,
  ));
  const primaryIp = (n: string) => `(${present(n)} && ${check.int(value(n), INTEGERS["public-net-ipv4"])})`;
  out.push(cross(
    ["public-net-ipv4", "public-net-ipv6", "disable-public-network"],
    `!((${primaryIp("public-net-ipv4")} || ${primaryIp("public-net-ipv6")}) && ${
      present("disable-public-network")
    } && ` +
      `${value("disable-public-network")} in [${
        parseGoBoolSpellings(true).map((s) => `'${s}'`).join(", ")
      }])`,
    lit(
      `annotation ${LB_ANNOTATION_PREFIX}public-net-ipv4/-ipv6 needs the public network, but ` +
        `${LB_ANNOTATION_PREFIX}disable-public-network disables it`,
    ),
  ));
  return out;
}
