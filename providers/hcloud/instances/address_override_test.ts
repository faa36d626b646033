import { assert, assertEquals, assertThrows } from "../../../testing/assert.ts";
import { ADDRESS_OVERRIDES, applyAddressOverrides } from "./address_override.ts";
import { lookup } from "./instances.ts";
import { buildSnapshot } from "../servers/mod.ts";
import { warningsOf } from "../../errors.ts";

const FROM_SERVER = [
  { type: "Hostname", address: "web-1" },
  { type: "ExternalIP", address: "203.0.113.1" },
  { type: "InternalIP", address: "10.0.0.2" },
];
const node = (annotations: Record<string, string>, name = "web-1") => ({ metadata: { name, annotations } });

Deno.test("address overrides replace the addresses of their type, in the official order", () => {
  assertEquals(applyAddressOverrides(node({}), FROM_SERVER), FROM_SERVER);
  assertEquals(
    applyAddressOverrides(
      node({
        [ADDRESS_OVERRIDES.InternalIP]: "100.64.0.7",
        [ADDRESS_OVERRIDES.ExternalIP]: "198.51.100.9, 2001:db8::9",
      }),
      FROM_SERVER,
    ),
    [
      { type: "Hostname", address: "web-1" },
      { type: "ExternalIP", address: "198.51.100.9" },
      { type: "ExternalIP", address: "2001:db8::9" },
      { type: "InternalIP", address: "100.64.0.7" },
    ],
  );
});

Deno.test("an invalid address override is an error naming the annotation and the value", () => {
  for (const value of ["10.0.0.300", "10.0.0.1,", "10.0.0.0/24", "vpn"]) {
    const err = assertThrows(
      () => applyAddressOverrides(node({ [ADDRESS_OVERRIDES.InternalIP]: value }), FROM_SERVER),
      Error,
    );
    assert(err.message.includes(`node.deno-ccm.io/internal-ip="${value}"`), err.message);
    assertEquals(warningsOf(err).map((w) => w.reason), ["InvalidAddressOverride"]);
  }
});

Deno.test("HCLOUD_INSTANCES_NODE_NAME_SUFFIX: an FQDN Node matches its short-named server, a full name first", () => {
  const server = (id: number, name: string) => ({
    id,
    name,
    status: "running",
    serverType: "cx23",
    location: "fsn1",
    networkZone: "eu-central",
    privateNets: [],
    labels: {},
    primaryIpIds: [],
  });
  const snapshot = buildSnapshot(
    [server(1, "web-1"), server(2, "db-1.example.com"), server(3, "db-1")],
    0,
    true,
  );
  assertEquals(lookup(snapshot, node({}, "web-1.example.com"), ".example.com")?.id, 1);
  assertEquals(lookup(snapshot, node({}, "db-1.example.com"), ".example.com")?.id, 2, "the exact name wins");
  assertEquals(lookup(snapshot, node({}, "web-1.example.com")), undefined, "no suffix configured");
  assertEquals(lookup(snapshot, node({}, "web-1.other.org"), ".example.com"), undefined);
});
