import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals, assertThrows } from "../testing/assert.ts";
import { initLabels, labelRepairs, nodeAddresses, PROVIDED_NODE_IP, sameAddresses } from "./node_metadata.ts";

const cloud = [
  { type: "Hostname", address: "n1" },
  { type: "ExternalIP", address: "203.0.113.5" },
  { type: "ExternalIP", address: "2001:db8::1" },
  { type: "InternalIP", address: "10.0.0.2" },
];
const withIp = (ip?: string): Node => ({
  metadata: { name: "n1", annotations: ip ? { [PROVIDED_NODE_IP]: ip } : {} },
});

Deno.test("node metadata: labels with beta twins, protected prefixes skipped, existing keys kept", () => {
  const labels = initLabels({ metadata: { labels: { "team": "a" } } }, {
    providerID: "x://1",
    instanceType: "cx22",
    zone: "",
    region: "fsn1",
    nodeAddresses: [],
    additionalLabels: {
      "instance.hetzner.cloud/provided-by": "cloud",
      "node.kubernetes.io/evil": "x",
      team: "b",
    },
  });
  assertEquals(labels, {
    "node.kubernetes.io/instance-type": "cx22",
    "beta.kubernetes.io/instance-type": "cx22",
    "topology.kubernetes.io/region": "fsn1",
    "failure-domain.beta.kubernetes.io/region": "fsn1",
    "instance.hetzner.cloud/provided-by": "cloud",
  });
  assertEquals(
    labelRepairs({
      metadata: {
        labels: { "beta.kubernetes.io/instance-type": "a", "node.kubernetes.io/instance-type": "b" },
      },
    }),
    {
      "node.kubernetes.io/instance-type": "a",
    },
  );
});

Deno.test("node metadata: provided node IP keeps only matching addresses of its type and must match", () => {
  assertEquals(nodeAddresses(withIp(), cloud), cloud);
  assertEquals(nodeAddresses(withIp("10.0.0.2"), cloud), [
    { type: "InternalIP", address: "10.0.0.2" },
    { type: "Hostname", address: "n1" },
    { type: "ExternalIP", address: "203.0.113.5" },
    { type: "ExternalIP", address: "2001:db8::1" },
  ]);
  assertEquals(nodeAddresses(withIp("203.0.113.5"), cloud)?.map((a) => a.address), [
    "203.0.113.5",
    "n1",
    "10.0.0.2",
  ]);
  assertEquals(nodeAddresses(withIp("203.0.113.5,2001:db8::1"), cloud)?.map((a) => a.address), [
    "203.0.113.5",
    "2001:db8::1",
    "n1",
    "10.0.0.2",
  ]);
  assertThrows(() => nodeAddresses(withIp("10.9.9.9"), cloud), Error);
  assertEquals(nodeAddresses(withIp(), []), undefined);
  const kubeletHostname = {
    metadata: { name: "n1" },
    status: { addresses: [{ type: "Hostname", address: "host-from-kubelet" }] },
  };
  assertEquals(
    nodeAddresses(kubeletHostname, [{ type: "ExternalIP", address: "1.2.3.4" }])?.map((a) => a.address),
    [
      "1.2.3.4",
      "host-from-kubelet",
    ],
  );
  assertEquals(sameAddresses(cloud, [...cloud].reverse()), true);
});
