/**
 * What the node IPAM controller hands out, from the flags: per address family of `--cluster-cidr`
 * (in its order, the cluster's primary family first) either a pool of that range's subnets
 * (`RangeAllocator`, and IPv4 always) or, with `CloudAllocator`, the subnet at index 1 of the
 * Node's machine's IPv6 `/64` (index 0 holds the host's `::1`). Pure; every problem is reported at
 * once, naming the flag and value.
 *
 * @module
 */
import type { Flags } from "../../config/flags.ts";
import { type Cidr, parseCidr } from "../../lib/cidr.ts";
import { MAX_POOL_BITS } from "../../lib/cidr_pool.ts";

/** The allocator types `--cidr-allocator-type` takes. */
export const ALLOCATOR_TYPES = ["CloudAllocator", "RangeAllocator"] as const;

/** How one family's pod CIDRs are found. */
export interface FamilyPlan {
  /** 4 or 6. */
  family: 4 | 6;
  /** The family's range in `--cluster-cidr`: a pool's range, or what a machine's range must lie in. */
  clusterRange: Cidr;
  /** Prefix length of each Node's range. */
  prefix: number;
  /** `pool`: subnets of `clusterRange`; `machine`: index 1 of the machine's IPv6 /64. */
  source: "pool" | "machine";
}

/** The flags the plan reads. */
export type IpamFlags = Pick<
  Flags,
  "clusterCidr" | "cidrAllocatorType" | "nodeCidrMaskSizeIpv4" | "nodeCidrMaskSizeIpv6"
>;

/** The families to allocate, in `--cluster-cidr` order, or the problems with the flags. */
export function ipamPlan(flags: IpamFlags): { families: FamilyPlan[]; errors: string[] } {
  const errors: string[] = [];
  const type = flags.cidrAllocatorType;
  if (!(ALLOCATOR_TYPES as readonly string[]).includes(type)) {
    errors.push(
      `--cidr-allocator-type: "${type}" is not one of ${ALLOCATOR_TYPES.join(", ")} (node-ipam-controller)`,
    );
  }
  const texts = flags.clusterCidr.split(",").map((s) => s.trim()).filter(Boolean);
  if (texts.length === 0) {
    errors.push("--cluster-cidr: the node-ipam-controller hands out pod CIDRs from it; it is not set");
  }
  const families: FamilyPlan[] = [];
  for (const text of texts) {
    const range = parseCidr(text);
    if (!range) continue; // the flag check names it
    if (families.some((f) => f.family === range.family)) {
      errors.push(`--cluster-cidr: two IPv${range.family} ranges ("${flags.clusterCidr}"): one per family`);
      continue;
    }
    const machine = range.family === 6 && type === "CloudAllocator";
    const flag = `--node-cidr-mask-size-ipv${range.family}`;
    const given = range.family === 4 ? flags.nodeCidrMaskSizeIpv4 : flags.nodeCidrMaskSizeIpv6;
    const prefix = given || (range.family === 4 ? 24 : machine ? 80 : 64);
    if (machine) {
      // Index 1 of the /64 needs at least two subnets; past /120 a Node holds too few pods.
      if (prefix < 65 || prefix > 120) {
        errors.push(`${flag}: ${prefix} does not split a server's /64 (CloudAllocator takes 65 to 120)`);
        continue;
      }
    } else {
      const bits = range.family === 4 ? 32 : 128;
      if (prefix < range.prefix || prefix > bits - 2) {
        errors.push(`${flag}: a /${prefix} per Node does not fit --cluster-cidr ${range.text}`);
        continue;
      }
      if (prefix - range.prefix > MAX_POOL_BITS) {
        errors.push(
          `${flag}: ${range.text} holds 2^${
            prefix - range.prefix
          } ranges of /${prefix}; at most 2^${MAX_POOL_BITS} ` +
            `(a longer --cluster-cidr prefix or a shorter mask)`,
        );
        continue;
      }
    }
    families.push({
      family: range.family,
      clusterRange: range,
      prefix,
      source: machine ? "machine" : "pool",
    });
  }
  return { families, errors };
}
