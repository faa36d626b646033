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
import type { Taint } from "kubernetes-types/core/v1.d.ts";

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

/** A server label key (or `prefix*`) whose labels become Node taints, and their effect. */
export interface ServerTaintPattern {
  /** A server label key, or a prefix ending in `*`. */
  pattern: string;
  /** The taint's effect. */
  effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;

/**
 * Reads `HCLOUD_INSTANCES_SERVER_TAINTS` (or, named by `variable`, `HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS`):
 * `key[:Effect],prefix*[:Effect]`; problems go to `errors`.
 */
export function parseServerTaintPatterns(
  text: string | undefined,
  errors: string[],
  variable = "HCLOUD_INSTANCES_SERVER_TAINTS",
): ServerTaintPattern[] | undefined {
  const entries = (text ?? "").split(",").map((e) => e.trim()).filter(Boolean);
  const out: ServerTaintPattern[] = [];
  for (const entry of entries) {
    const [pattern, effect = "NoSchedule"] = entry.split(":");
    if (invalidServerLabelPattern([pattern]) !== undefined) {
      errors.push(
        `${variable}: "${pattern}" is not a label key (or a key prefix ending in *)`,
      );
    } else if (!(EFFECTS as readonly string[]).includes(effect)) {
      errors.push(
        `${variable}: "${entry}": the effect is not one of ${EFFECTS.join(", ")}`,
      );
    } else out.push({ pattern, effect: effect as ServerTaintPattern["effect"] });
  }
  return out.length ? out : undefined;
}

/**
 * The Node taints for a server's labels: each label a pattern matches becomes the taint
 * `<prefix>/<key>=<value>:<effect>`, named as {@link nodeLabelsFromServer} names labels.
 */
export function nodeTaintsFromServer(
  serverLabels: Record<string, string>,
  patterns: ServerTaintPattern[],
  prefix: string,
): Taint[] {
  const taints: Taint[] = [];
  for (const { pattern, effect } of patterns) {
    for (const [key, value] of Object.entries(nodeLabelsFromServer(serverLabels, [pattern], prefix))) {
      if (!taints.some((t) => t.key === key)) taints.push({ key, ...(value ? { value } : {}), effect });
    }
  }
  return taints;
}
