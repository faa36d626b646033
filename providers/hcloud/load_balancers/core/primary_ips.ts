/**
 * Keep-your-IP: the official CCM's `load-balancer.hetzner.cloud/public-net-ipv4` and `-ipv6`
 * annotations (Primary IP IDs), applied when the balancer is created; a recreated Service keeps its
 * addresses as long as the Primary IPs outlive the balancer (`auto_delete: false`). On an existing
 * balancer, adding or changing them is a warning and nothing else, as in the official CCM.
 *
 * @module
 */
import type { ProviderWarning } from "../../../provider.ts";
import { type LoadBalancerSpec, PREFIX } from "../spec/mod.ts";

/** The create request's `public_net` (a field newer than our spec copy), when an annotation asks. */
export function primaryIpsBody(spec: LoadBalancerSpec): Record<string, unknown> {
  if (!spec.publicNetIpv4 && !spec.publicNetIpv6) return {};
  return {
    public_net: {
      ...(spec.publicNetIpv4 ? { ipv4: spec.publicNetIpv4 } : {}),
      ...(spec.publicNetIpv6 ? { ipv6: spec.publicNetIpv6 } : {}),
    },
  };
}

/** What the balancer's addresses say about their Primary IPs (`id`, when the API names one). */
interface PublicNet {
  ipv4?: { id?: number | null } | null;
  ipv6?: { id?: number | null } | null;
}

/** Warnings for annotations that differ from the Primary IPs the existing balancer was created with. */
export function primaryIpWarnings(
  lb: { name: string; public_net?: unknown },
  spec: LoadBalancerSpec,
): ProviderWarning[] {
  const net = (lb.public_net ?? {}) as PublicNet;
  const warnings: ProviderWarning[] = [];
  for (const [family, wanted] of [["ipv4", spec.publicNetIpv4], ["ipv6", spec.publicNetIpv6]] as const) {
    const current = net[family]?.id ?? undefined;
    // Only an annotation that names another Primary IP is reported: whether the API names an ID for
    // system-managed addresses too is not documented, so a missing annotation says nothing.
    if (wanted === undefined || wanted === current) continue;
    warnings.push({
      reason: "PrimaryIPNotChanged",
      message:
        `annotation ${PREFIX}public-net-${family}${wanted ? `="${wanted}"` : " (removed)"} differs from ` +
        `load balancer ${lb.name}'s ${
          current ? `Primary IP ${current}` : "system-managed address"
        }: Primary IPs ` +
        `apply only when the balancer is created; delete and recreate the Service to change them`,
    });
  }
  return warnings;
}
