import { assertEquals } from "../../testing/assert.ts";
import { parseFlags } from "../../config/flags.ts";
import { ipamPlan } from "./node_ipam_plan.ts";

const plan = (...args: string[]) => {
  const { flags, errors } = parseFlags(args);
  assertEquals(errors, []);
  const { families, errors: problems } = ipamPlan(flags);
  return { families: families.map((f) => `${f.clusterRange.text} /${f.prefix} ${f.source}`), problems };
};

Deno.test("ipam plan: families in --cluster-cidr order; IPv6 from machines with CloudAllocator (a /80), from the range otherwise (a /64)", () => {
  assertEquals(plan("--cluster-cidr=10.244.0.0/16,2a01:4f8::/29").families, [
    "10.244.0.0/16 /24 pool",
    "2a01:4f8::/29 /80 machine",
  ]);
  assertEquals(
    plan("--cluster-cidr=fd00::/48,10.244.0.0/16", "--cidr-allocator-type=RangeAllocator").families,
    [
      "fd00::/48 /64 pool",
      "10.244.0.0/16 /24 pool",
    ],
  );
  assertEquals(plan("--cluster-cidr=10.42.0.0/16", "--node-cidr-mask-size-ipv4=26").families, [
    "10.42.0.0/16 /26 pool",
  ]);
});

Deno.test("ipam plan: every problem named with its flag and value", () => {
  assertEquals(plan("--cidr-allocator-type=IPAMFromCloud").problems, [
    '--cidr-allocator-type: "IPAMFromCloud" is not one of CloudAllocator, RangeAllocator (node-ipam-controller)',
    "--cluster-cidr: the node-ipam-controller hands out pod CIDRs from it; it is not set",
  ]);
  assertEquals(plan("--cluster-cidr=10.0.0.0/16,10.1.0.0/16").problems, [
    '--cluster-cidr: two IPv4 ranges ("10.0.0.0/16,10.1.0.0/16"): one per family',
  ]);
  // 2^16 /24s in a /8 is kube-controller-manager's limit, still allowed; a /64 leaves no index 1.
  assertEquals(plan("--cluster-cidr=10.0.0.0/8,2a01::/16", "--node-cidr-mask-size-ipv6=64").problems, [
    "--node-cidr-mask-size-ipv6: 64 does not split a server's /64 (CloudAllocator takes 65 to 120)",
  ]);
  assertEquals(plan("--cluster-cidr=10.0.0.0/7").problems, [
    "--node-cidr-mask-size-ipv4: 10.0.0.0/7 holds 2^17 ranges of /24; at most 2^16 (a longer --cluster-cidr prefix or a shorter mask)",
  ]);
  assertEquals(plan("--cluster-cidr=10.244.0.0/16", "--node-cidr-mask-size-ipv4=12").problems, [
    "--node-cidr-mask-size-ipv4: a /12 per Node does not fit --cluster-cidr 10.244.0.0/16",
  ]);
});
