/**
 * Server labels as Node labels (ours; HCCM #41, #866): the server labels matching
 * `HCLOUD_INSTANCES_SERVER_LABELS` (keys, or prefixes ending in `*`), under the Node-label prefix
 * `HCLOUD_INSTANCES_SERVER_LABEL_PREFIX` (default `server.hetzner.cloud`). A server label `team`
 * becomes `server.hetzner.cloud/team`; one with its own prefix, `example.com/tier`, becomes
 * `server.hetzner.cloud/example.com.tier`. Labels the CCM itself puts on servers are never copied.
 *
 * @module
 */
import { DEFAULT_SERVER_LABEL_PREFIX } from "../names.ts";

export { DEFAULT_SERVER_LABEL_PREFIX };

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
const OWN = /^(deno-ccm|hcloud-ccm)\//;

/** A pattern list is valid when each entry is a label key, optionally ending in `*`. */
export function invalidServerLabelPattern(patterns: string[]): string | undefined {
  return patterns.find((p) => !/^[A-Za-z0-9][-A-Za-z0-9_./]*\*?$|^\*$/.test(p));
}

/** The Node labels for a server's labels. */
export function nodeLabelsFromServer(
  serverLabels: Record<string, string>,
  patterns: string[],
  prefix: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(serverLabels)) {
    if (OWN.test(key)) continue;
    if (!patterns.some((p) => p.endsWith("*") ? key.startsWith(p.slice(0, -1)) : key === p)) continue;
    const name = key.replaceAll("/", ".");
    if (name.length > 63 || !NAME.test(name) || value.length > 63 || !VALUE.test(value)) continue;
    out[`${prefix}/${name}`] = value;
  }
  return out;
}
