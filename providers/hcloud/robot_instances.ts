/**
 * Robot Nodes as the official CCM initializes them: provider ID `hrobot://<number>` (the legacy
 * `hcloud://bm-<number>` is read, never written), instance type from the product, zone the data
 * center and region its location, addresses per address family (IPv6 `<net>1` before IPv4, then
 * the kubelet's InternalIPs when forwarded), and the `external-ipv6` annotation. Plus the
 * `instance.hetzner.cloud/is-root-server=true` label the official CSI driver's docs ask users to set.
 *
 * @module
 */
import type { Node, NodeAddress } from "kubernetes-types/core/v1.d.ts";
import type { InstanceMetadata, ProviderWarning } from "../provider.ts";
import type { AddressFamily } from "./config.ts";
import type { RobotServerInfo } from "./robot_client.ts";
import { applyExternalIpv6 } from "./external_ipv6.ts";
import { applyAddressOverrides } from "./address_override.ts";

/** Settings that shape Robot metadata. */
export interface RobotMetadataOptions {
  addressFamily: AddressFamily;
  forwardInternalIps: boolean;
}

/** Robot metadata of `node` from its server. */
export function robotMetadata(
  node: Node,
  server: RobotServerInfo,
  options: RobotMetadataOptions,
): InstanceMetadata {
  const { addresses, warnings } = robotAddresses(node, server, options);
  const derived = server.ipv6Net ? `${server.ipv6Net}1` : undefined;
  const withIpv6 = applyExternalIpv6(node, addresses, options.addressFamily, derived);
  const zone = server.dc.toLowerCase();
  const all = [...warnings, ...withIpv6.warnings];
  return {
    ...(all.length ? { warnings: all } : {}),
    providerID: `hrobot://${server.number}`,
    instanceType: server.product.replaceAll(" ", "-").replace(/[^a-zA-Z0-9_.-]+/g, ""),
    zone: zone || undefined,
    region: zone.split("-")[0] || undefined,
    nodeAddresses: applyAddressOverrides(node, withIpv6.addresses),
    additionalLabels: {
      "instance.hetzner.cloud/provided-by": "robot",
      "instance.hetzner.cloud/is-root-server": "true",
    },
  };
}

/** Hostname, ExternalIP v6 (`<net>1`), ExternalIP v4, then forwarded InternalIPs that fit. */
export function robotAddresses(
  node: Node,
  server: RobotServerInfo,
  options: RobotMetadataOptions,
): { addresses: NodeAddress[]; warnings: ProviderWarning[] } {
  const family = options.addressFamily;
  const ipv4 = family !== "ipv6";
  const ipv6 = family !== "ipv4";
  const addresses: NodeAddress[] = [{ type: "Hostname", address: server.name }];
  // A server without IPv6 has no net: no address (the official CCM would report a bare "1").
  if (ipv6 && server.ipv6Net) addresses.push({ type: "ExternalIP", address: `${server.ipv6Net}1` });
  if (ipv4 && server.ipv4) addresses.push({ type: "ExternalIP", address: server.ipv4 });
  const warnings: ProviderWarning[] = [];
  if (!options.forwardInternalIps) return { addresses, warnings };
  for (const current of node.status?.addresses ?? []) {
    if (current.type !== "InternalIP") continue;
    const isV4 = !current.address.includes(":");
    let problem: string | undefined;
    if (family === "ipv6" && isV4) {
      problem =
        `InternalIP ${current.address} is IPv4 but HCLOUD_INSTANCES_ADDRESS_FAMILY=ipv6; it is not kept`;
    } else if (family === "ipv4" && !isV4) {
      problem =
        `InternalIP ${current.address} is IPv6 but HCLOUD_INSTANCES_ADDRESS_FAMILY=ipv4; it is not kept`;
    } else if (addresses.some((a) => a.address === current.address)) {
      problem = `InternalIP ${current.address} is also an ExternalIP; it is not kept as InternalIP`;
    }
    if (problem) warnings.push({ reason: "MisconfiguredInternalIP", message: problem });
    else addresses.push({ type: "InternalIP", address: current.address });
  }
  return { addresses, warnings };
}
