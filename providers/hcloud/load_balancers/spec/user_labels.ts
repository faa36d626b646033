/**
 * Labels of the operator's and the Service owner's choice on the balancers (and managed
 * certificates) the CCM creates, for `hcloud` CLI selection, cost reports and the like (official CCM
 * #322; AWS `additional-resource-tags`, Scaleway `SCW_CCM_TAGS`): `HCLOUD_LOAD_BALANCERS_LABELS`
 * for every balancer, the Service annotation `service.deno-ccm.io/load-balancer-labels` for its own.
 * Both read `key=value,key2=value2`.
 *
 * Threat model: the annotation is a namespace tenant's. The labels that mean ownership or consent to
 * the CCM (`hcloud-ccm/…`, `deno-ccm/…`) can be set by neither source, so no tenant can make a
 * balancer look like another Service's, another cluster's, or consented to; the operator's labels win
 * over the tenant's on the same key; a Service may set at most {@link MAX_SERVICE_LABELS}. A value
 * that breaks these rules is an input error naming annotation and value, before any cloud call.
 *
 * @module
 */
import { LB_LABELS_ANNOTATION } from "../../names.ts";
import { trimAscii } from "../../../../lib/ascii_space.ts";
// Hetzner's label keys and values follow Kubernetes' grammar.
import { KEY, VALUE } from "../../../../lib/label_selector.ts";

/** At most this many labels from one Service's annotation (Hetzner allows more; a tenant need not). */
export const MAX_SERVICE_LABELS = 10;

/** Label key prefixes only the CCM writes: they say who owns an object, or consent to its use. */
export const RESERVED = /^(hcloud-ccm|deno-ccm)\//;
/** Reads `key=value,…` from `source` (named in errors); errors name the entry. */
export function parseUserLabels(
  text: string | undefined,
  source: string,
  max = Infinity,
): { labels: Record<string, string>; errors: string[] } {
  const labels: Record<string, string> = {};
  const errors: string[] = [];
  const entries = (text ?? "").split(",").map(trimAscii).filter((e) => e !== "");
  if (entries.length > max) errors.push(`${source}: ${entries.length} labels; at most ${max}`);
  for (const entry of entries.slice(0, 100)) {
    const at = entry.indexOf("=");
    const key = at < 0 ? entry : trimAscii(entry.slice(0, at));
    const value = at < 0 ? "" : trimAscii(entry.slice(at + 1));
    const shown = JSON.stringify(entry.slice(0, 80));
    if (at < 0) errors.push(`${source}: ${shown} is not key=value`);
    else if (RESERVED.test(key)) {
      errors.push(`${source}: ${shown}: keys under hcloud-ccm/ and deno-ccm/ are the CCM's`);
    } else if (key.length > 253 || !KEY.test(key)) {
      errors.push(`${source}: ${shown}: the key is not a valid label key`);
    } else if (!VALUE.test(value)) errors.push(`${source}: ${shown}: the value is not a valid label value`);
    else labels[key] = value;
  }
  return { labels, errors };
}

/**
 * The user labels for a Service's balancer: the Service's annotation, then the operator's labels
 * (which win on the same key). `errors` name the annotation and the entry.
 */
export function userLabelsFor(
  annotations: Record<string, string>,
  operator: Record<string, string>,
): { labels: Record<string, string>; errors: string[] } {
  const own = parseUserLabels(
    annotations[LB_LABELS_ANNOTATION],
    `annotation ${LB_LABELS_ANNOTATION}`,
    MAX_SERVICE_LABELS,
  );
  return { labels: { ...own.labels, ...operator }, errors: own.errors };
}
