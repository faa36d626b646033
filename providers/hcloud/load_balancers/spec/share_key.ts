/**
 * The share key (`load-balancer.hetzner.cloud/share`): what it may be and which annotations cannot
 * stand beside it. Part of reading the Service (annotations.ts) and of the admission policy, so it
 * imports nothing of the sharing plans.
 *
 * @module
 */
import { quoteValue } from "../../../../lib/quote_value.ts";
import { LB_ANNOTATION_PREFIX, SHARE_ANNOTATION } from "../../names.ts";

/** What a share key may be: a DNS label short enough to name a balancer with its namespace. */
export const SHARE_KEY = {
  pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
  maxLength: 40,
  what: "share key (lower-case letters, digits and '-', at most 40 characters)",
};

/** Annotations that cannot be set with a share key (the balancer is no single Service's). */
export const NOT_WITH_SHARE = [
  "attach-to",
  "adopt-existing",
  "node-selector",
  "public-net-ipv4",
  "public-net-ipv6",
] as const;

/** What is wrong with a share key and the annotations beside it (`present`: whether one is set). */
export function shareErrors(key: string, present: (name: string) => boolean): string[] {
  const errors: string[] = [];
  if (key.length > SHARE_KEY.maxLength || !SHARE_KEY.pattern.test(key)) {
    errors.push(`annotation ${SHARE_ANNOTATION}: ${quoteValue(key)} is not a valid ${SHARE_KEY.what}`);
  }
  const clash = NOT_WITH_SHARE.filter(present);
  if (clash.length) {
    errors.push(
      `annotation ${SHARE_ANNOTATION}: the balancer is shared, so ${
        clash.map((n) => LB_ANNOTATION_PREFIX + n).join(", ")
      } cannot be set with it (a shared balancer targets the eligible Nodes of the cluster and is made by the CCM)`,
    );
  }
  return errors;
}
