/**
 * Per-Node address overrides (ours; HCCM #703, #635): `node.deno-ccm.io/internal-ip` and
 * `node.deno-ccm.io/external-ip` name the Node's InternalIP or ExternalIP addresses (comma-separated),
 * replacing the ones derived from the server, e.g. for traffic through a VPN or an address the
 * cloud does not know. An invalid value keeps the Node from initializing (and its addresses from
 * refreshing) with a Warning naming the annotation and the value, as an invalid
 * `instance.hetzner.cloud/external-ipv6` does.
 *
 * @module
 */
import type { Node, NodeAddress } from "kubernetes-types/core/v1.d.ts";
import { parseIp } from "../../../lib/cidr.ts";
import { ProviderError } from "../../errors.ts";
import { ADDRESS_OVERRIDES } from "../names.ts";

export { ADDRESS_OVERRIDES };

/** Applies the overrides to `addresses` (order kept: Hostname, ExternalIP, InternalIP); throws for an invalid value. */
export function applyAddressOverrides(node: Node, addresses: NodeAddress[]): NodeAddress[] {
  let out = addresses;
  for (const [type, annotation] of Object.entries(ADDRESS_OVERRIDES)) {
    const value = node.metadata?.annotations?.[annotation];
    if (value === undefined) continue;
    const ips = value.split(",").map((s) => s.trim());
    const bad = ips.find((ip) => !parseIp(ip) || ip.includes("/"));
    if (bad !== undefined || ips.length > 8) {
      const shown = value.length > 128 ? `${value.slice(0, 128)}…` : value;
      const err = new Error(
        `annotation ${annotation}="${shown}" is not a comma-separated list of up to 8 IP addresses` +
          (bad !== undefined ? ` ("${bad.slice(0, 64)}" is not one)` : ""),
      );
      throw new ProviderError(err, {
        warnings: [{ reason: "InvalidAddressOverride", message: err.message }],
      });
    }
    const replaced: NodeAddress[] = [...new Set(ips)].map((address) => ({ type, address }));
    const kept = out.filter((a) => a.type !== type);
    const at = type === "ExternalIP" ? kept.findIndex((a) => a.type === "InternalIP") : -1;
    kept.splice(at < 0 ? kept.length : at, 0, ...replaced);
    out = kept;
  }
  return out;
}
