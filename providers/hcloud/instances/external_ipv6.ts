/**
 * The official CCM's (v1.37) Node annotation `instance.hetzner.cloud/external-ipv6`: the IPv6
 * ExternalIP the server really uses, instead of the `::1` derived from its /64. Ignored with a
 * warning when the address family has no IPv6; a value that is not a global unicast IPv6 address
 * keeps the Node from initializing (and its addresses from refreshing) with a warning.
 *
 * @module
 */
import type { Node, NodeAddress } from "kubernetes-types/core/v1.d.ts";
import { parseIp } from "../../../lib/cidr.ts";
import { ProviderError } from "../../errors.ts";
import type { ProviderWarning } from "../../provider.ts";
import type { AddressFamily } from "./address_family.ts";
import { EXTERNAL_IPV6_ANNOTATION } from "../names.ts";

export { EXTERNAL_IPV6_ANNOTATION };

/**
 * Applies the annotation to `addresses` (the official CCM's order: Hostname, ExternalIP v4,
 * ExternalIP v6, InternalIP). Returns the addresses and warnings; throws for an invalid value.
 */
export function applyExternalIpv6(
  node: Node,
  addresses: NodeAddress[],
  family: AddressFamily,
  derivedIpv6: string | undefined,
): { addresses: NodeAddress[]; warnings: ProviderWarning[] } {
  const value = node.metadata?.annotations?.[EXTERNAL_IPV6_ANNOTATION];
  if (value === undefined) return { addresses, warnings: [] };
  if (family === "ipv4") {
    return {
      addresses,
      warnings: [{
        reason: "IgnoredExternalIPv6",
        message: `annotation ${EXTERNAL_IPV6_ANNOTATION}="${shorten(value)}" is ignored: ` +
          `HCLOUD_INSTANCES_ADDRESS_FAMILY=${family} reports no IPv6 addresses`,
      }],
    };
  }
  const ip = value.trim();
  if (!isGlobalUnicastIpv6(ip)) {
    const err = new Error(
      `annotation ${EXTERNAL_IPV6_ANNOTATION}="${shorten(value)}" is not a global unicast IPv6 address`,
    );
    throw new ProviderError(err, { warnings: [{ reason: "InvalidExternalIPv6", message: err.message }] });
  }
  const out = addresses.filter((a) => !(a.type === "ExternalIP" && a.address === derivedIpv6));
  const at = out.findIndex((a) => a.type === "InternalIP");
  out.splice(at < 0 ? out.length : at, 0, { type: "ExternalIP", address: ip });
  return { addresses: out, warnings: [] };
}

/** As Go's `net.IP.IsGlobalUnicast` for IPv6: not unspecified, loopback, multicast or link-local. */
export function isGlobalUnicastIpv6(text: string): boolean {
  const parsed = parseIp(text);
  if (!parsed || parsed.family !== 6) return false;
  const v = parsed.value;
  if (v === 0n || v === 1n) return false;
  const top16 = v >> 112n;
  if (top16 >> 8n === 0xffn) return false; // ff00::/8 multicast
  if ((top16 & 0xffc0n) === 0xfe80n) return false; // fe80::/10 link-local
  if (v >> 32n === 0xffffn) return false; // an IPv4-mapped address is IPv4
  return true;
}

function shorten(s: string): string {
  return s.length > 64 ? `${s.slice(0, 64)}…` : s;
}
