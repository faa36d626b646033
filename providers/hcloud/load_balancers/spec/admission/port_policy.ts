/**
 * The admission policy's part for per-port settings (port_settings.ts): a new or changed
 * `service.deno-ccm.io/port-<port>-<setting>` annotation must name a setting the CCM knows and a TCP
 * port of the Service, and hold a value of the setting's type, judged as the CCM's parser judges it
 * (the same choices, ranges and patterns from annotation_rules.ts). Rules across several settings
 * (a certificate needs https, a redirect needs port 80) are left to the CCM, which refuses them
 * before any cloud call: the policy is more lenient there, never stricter.
 *
 * Reads two variables the template defines: `pp`, the per-port keys a request adds or changes, and
 * `tcp`, the Service's TCP ports (as strings).
 *
 * @module
 */
import { ASCII_SPACE } from "../../../../../lib/ascii_space.ts";
import { CHOICES, INTEGERS, PATTERNS, SECRET_NAME, STATUS_CODE } from "../annotation_rules.ts";
import { check, lit, quoted, re2, says, type Validation } from "./admission_policy.ts";
import { PORT_ANNOTATION_PREFIX, PORT_SETTINGS, type PortSetting } from "../port_settings.ts";

const A = "variables.a";
/** The per-port keys the request adds or changes. */
export const CHANGED_PORT_KEYS = `${A}.filter(k, k.startsWith('${PORT_ANNOTATION_PREFIX}') && ` +
  `!(k in variables.old && variables.old[k] == ${A}[k]))`;
/** The Service's TCP ports, as strings. */
export const TCP_PORTS = "object.spec.?ports.orValue([]).filter(p, !has(p.protocol) || p.protocol == 'TCP')" +
  ".map(p, string(p.port))";

const ESCAPED_PREFIX = PORT_ANNOTATION_PREFIX.replaceAll(".", "\\.").replaceAll("/", "\\/");
const KEY = `^${ESCAPED_PREFIX}[1-9][0-9]{0,4}-(${PORT_SETTINGS.join("|")})$`;
/** The port in a well-formed key, as a string. */
const portOf = (k: string) => `${k}.substring(${PORT_ANNOTATION_PREFIX.length}).split('-')[0]`;

/** A rule over the changed keys `keys` (CEL list): `ok(k)` must hold for each; the message names the first that fails. */
function each(keys: string, ok: (k: string) => string, why: (k: string) => string): Validation {
  const first = `${keys}.filter(k, !(${ok("k")}))[0]`;
  return {
    expression: `${keys}.all(k, ${ok("k")})`,
    messageExpression: `'annotation ' + ${first} + ': ' + ${quoted(`${A}[${first}]`)} + ${why(first)}`,
    message: "a per-port annotation holds a name or value the CCM refuses",
    reason: "Invalid",
  };
}

/** Checks of one setting's value `v`, as the parser's (port_settings.ts `readSetting`). */
function valueCheck(setting: PortSetting): { ok: (v: string) => string; why: string } {
  const blank = lit(`^${ASCII_SPACE}*$`);
  const code = STATUS_CODE.source.slice(1, -1);
  switch (setting) {
    case "protocol":
    case "certificate-type":
    case "health-check-protocol": {
      const choices = CHOICES[setting];
      return { ok: (v) => check.choice(v, choices), why: `is not one of ${choices.join(", ")}` };
    }
    case "http-redirect-http":
    case "uses-proxyprotocol":
      return { ok: check.bool, why: "is not a boolean (true or false)" };
    case "http-certificates":
      return { ok: (v) => `${v}.split(',').exists(e, !e.matches(${blank}))`, why: "names no certificate" };
    case "health-check-port": {
      const range = INTEGERS["health-check-port"];
      return { ok: (v) => check.int(v, range), why: `is not an integer between ${range[0]} and ${range[1]}` };
    }
    case "health-check-http-path": {
      const rule = PATTERNS["health-check-http-path"];
      return {
        ok: (v) => `${v}.size() <= ${rule.maxLength} && ${v}.matches(${re2(rule.pattern)})`,
        why: `is not a valid ${rule.what}`,
      };
    }
    case "tls-secret":
      return {
        ok: (v) => `${v}.size() <= ${SECRET_NAME.maxLength} && ${v}.matches(${re2(SECRET_NAME.pattern)})`,
        why: `is not a valid ${SECRET_NAME.what}`,
      };
    case "http-status-codes":
      return {
        ok: (v) =>
          `${v}.size() > 8192 || (${v}.split(',').all(e, e.matches(${
            lit(`^${ASCII_SPACE}*(${code})?${ASCII_SPACE}*$`)
          })) && ` +
          `${v}.split(',').exists(e, e.matches(${lit(`^${ASCII_SPACE}*${code}${ASCII_SPACE}*$`)})))`,
        why: 'is not a list of status codes like "200" or "2??"',
      };
  }
}

/** The per-port validations: names, ports, then each setting's values. */
export function portValidations(): Validation[] {
  const keys = "variables.pp";
  const wellFormed = `${keys}.filter(k, k.matches(${lit(KEY)}))`;
  const out: Validation[] = [
    each(
      keys,
      (k) => `${k}.matches(${lit(KEY)})`,
      () =>
        says(
          `is not a per-port setting: the name must be ${PORT_ANNOTATION_PREFIX}<port>-<setting>, the setting one of ${
            PORT_SETTINGS.join(", ")
          }`,
        ),
    ),
    each(
      wellFormed,
      (k) => `${portOf(k)} in variables.tcp`,
      (k) => `' names port ' + ${portOf(k)} + ', which is not a TCP port of this Service'`,
    ),
  ];
  for (const setting of PORT_SETTINGS) {
    const { ok, why } = valueCheck(setting);
    const ofSetting = `${keys}.filter(k, k.matches(${lit(`^${ESCAPED_PREFIX}[1-9][0-9]{0,4}-${setting}$`)}))`;
    out.push(each(ofSetting, (k) => ok(`${A}[${k}]`), () => says(why)));
  }
  return out;
}
