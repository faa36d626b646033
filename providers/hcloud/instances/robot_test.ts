import { assertEquals } from "../../../testing/assert.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { robotMetadata } from "./robot.ts";

const server = {
  number: 321,
  name: "bm-1",
  ipv4: "136.243.1.2",
  ipv6Net: "2a01:4f8:10:20::",
  product: "AX41-NVMe (2023)",
  dc: "FSN1-DC14",
};
const node = (addresses: { type: string; address: string }[] = []): Node => ({
  metadata: { name: "bm-1" },
  status: { addresses },
});

Deno.test("robot metadata: the official CCM's provider ID, type, zone, region and labels", () => {
  const meta = robotMetadata(node(), server, { addressFamily: "ipv4", forwardInternalIps: true });
  assertEquals(
    [meta.providerID, meta.instanceType, meta.zone, meta.region, meta.additionalLabels],
    ["hrobot://321", "AX41-NVMe-2023", "fsn1-dc14", "fsn1", {
      "instance.hetzner.cloud/provided-by": "robot",
      "instance.hetzner.cloud/is-root-server": "true",
    }],
  );
});

Deno.test("robot metadata: hcloud://bm-<n> only when asked; a set provider ID is never rewritten", () => {
  const options = { addressFamily: "ipv4" as const, forwardInternalIps: true };
  const bm = robotMetadata(node(), server, { ...options, hrobotProviderIds: false });
  assertEquals(bm.providerID, "hcloud://bm-321");
  const legacy: Node = { ...node(), spec: { providerID: "hcloud://bm-321" } };
  assertEquals(robotMetadata(legacy, server, options).providerID, "hcloud://bm-321");
  const official: Node = { ...node(), spec: { providerID: "hrobot://321" } };
  assertEquals(
    robotMetadata(official, server, { ...options, hrobotProviderIds: false }).providerID,
    "hrobot://321",
  );
});

Deno.test("robot addresses: IPv6 before IPv4 in dual stack; none made up without IPv6", () => {
  const dual = robotMetadata(node(), server, { addressFamily: "dualstack", forwardInternalIps: true });
  assertEquals(dual.nodeAddresses, [
    { type: "Hostname", address: "bm-1" },
    { type: "ExternalIP", address: "2a01:4f8:10:20::1" },
    { type: "ExternalIP", address: "136.243.1.2" },
  ]);
  const v4only = { ...server, ipv6Net: undefined };
  const v6 = robotMetadata(node(), v4only, { addressFamily: "ipv6", forwardInternalIps: true });
  assertEquals(v6.nodeAddresses, [{ type: "Hostname", address: "bm-1" }]);
});

Deno.test("robot addresses: kubelet InternalIPs kept when they fit, a Warning when not", () => {
  const meta = robotMetadata(
    node([
      { type: "InternalIP", address: "10.1.0.5" },
      { type: "InternalIP", address: "fd00::5" },
      { type: "InternalIP", address: "136.243.1.2" },
    ]),
    server,
    { addressFamily: "ipv4", forwardInternalIps: true },
  );
  assertEquals(meta.nodeAddresses.filter((a) => a.type === "InternalIP"), [
    { type: "InternalIP", address: "10.1.0.5" },
  ]);
  assertEquals(meta.warnings?.map((w) => w.reason), ["MisconfiguredInternalIP", "MisconfiguredInternalIP"]);
  const off = robotMetadata(node([{ type: "InternalIP", address: "10.1.0.5" }]), server, {
    addressFamily: "ipv4",
    forwardInternalIps: false,
  });
  assertEquals(off.nodeAddresses.some((a) => a.type === "InternalIP"), false);
});

Deno.test("robot metadata: with the location topology, zone = the location and region = its network zone", () => {
  const meta = robotMetadata(node(), server, {
    addressFamily: "ipv4",
    forwardInternalIps: true,
    topology: "location",
  });
  assertEquals([meta.zone, meta.region], ["fsn1", "eu-central"]);
});
