/**
 * What NodePort Services ask of the firewall, read: opt-in by the operator (namespaces) and the
 * Service (the annotation), sources from `service.deno-ccm.io/firewall-source-ranges` or
 * everywhere, and every bad request refused with the field and value named — a hostile value never
 * becomes a rule.
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals, assertMatch } from "../../../testing/assert.ts";
import { nodePortOpenings } from "./node_ports.ts";
import { FIREWALL_NODEPORTS_ANNOTATION, FIREWALL_SOURCE_RANGES_ANNOTATION } from "../names.ts";

function nodePort(
  name: string,
  options: { namespace?: string; ask?: string; ranges?: string[]; ports?: [number, string][]; at?: string } =
    {},
): Service {
  return {
    metadata: {
      name,
      namespace: options.namespace ?? "shop",
      uid: `uid-${name}`,
      creationTimestamp: options.at ?? "2026-11-27T10:00:00Z",
      annotations: {
        ...options.ask === undefined ? {} : { [FIREWALL_NODEPORTS_ANNOTATION]: options.ask },
        ...options.ranges ? { [FIREWALL_SOURCE_RANGES_ANNOTATION]: options.ranges.join(",") } : {},
      },
    },
    spec: {
      type: "NodePort",
      ports: (options.ports ?? [[30080, "TCP"]]).map(([nodePort, protocol], i) => ({
        name: `p${i}`,
        port: 80 + i,
        protocol,
        nodePort,
      })),
    },
  };
}

Deno.test("node ports: only Services that ask, in namespaces the operator allows, oldest first", () => {
  const services = [
    nodePort("newer", { ask: "true", at: "2026-11-27T11:00:00Z" }),
    nodePort("older", { ask: "1", at: "2026-11-27T09:00:00Z", ports: [[30090, "TCP"], [30091, "UDP"]] }),
    nodePort("quiet"),
    nodePort("declined", { ask: "false" }),
  ];
  const { openings, refused } = nodePortOpenings(services, ["shop"]);
  assertEquals(openings.map((o) => o.service), ["shop/older", "shop/newer"]);
  assertEquals(openings[0].ports, [{ protocol: "tcp", port: 30090 }, { protocol: "udp", port: 30091 }]);
  assertEquals(openings[0].sources, ["0.0.0.0/0", "::/0"], "no ranges: from everywhere, both families");
  assertEquals(refused, []);
  // Without the operator's word nothing opens, whatever the Services say.
  const off = nodePortOpenings(services, undefined);
  assertEquals(off.openings, []);
  assertEquals(off.refused.map((r) => r.service), ["shop/older", "shop/newer"]);
  assertMatch(off.refused[0].message, /namespace shop may not open NodePorts.*FIREWALL_NODEPORT_NAMESPACES/);
  assertEquals(nodePortOpenings(services, "*").openings.length, 2);
});

Deno.test("node ports: sources from service.deno-ccm.io/firewall-source-ranges, canonical and unique", () => {
  const listed = nodePort("a", {
    ask: "true",
    ranges: ["203.0.113.7/24", " 2001:db8::/32", "203.0.113.0/24 "],
  });
  const { openings } = nodePortOpenings([listed], "*");
  assertEquals(openings.map((o) => o.sources), [["2001:db8::/32", "203.0.113.0/24"]]);
});

Deno.test("node ports, hostile input: each bad request is refused naming field and value, and opens nothing", () => {
  const cases: [Service, RegExp][] = [
    [nodePort("junk", { ask: "please" }), /"please" is not true or false/],
    [nodePort("lb", { ask: "true" }), /only NodePort Services/],
    [
      nodePort("badcidr", { ask: "true", ranges: ["0.0.0.0/0", "evil\u0000;rm"] }),
      /firewall-source-ranges holds "evil\\u0000;rm", which is not a CIDR/,
    ],
    [
      nodePort("many", { ask: "true", ranges: Array.from({ length: 101 }, (_, i) => `10.${i}.0.0/16`) }),
      /holds 101 ranges; a firewall rule takes at most 100/,
    ],
    [nodePort("sctp", { ask: "true", ports: [[30100, "SCTP"]] }), /port 30100 uses "SCTP"/],
    [nodePort("elsewhere", { ask: "true", namespace: "other" }), /namespace other may not/],
  ];
  cases[1][0].spec!.type = "LoadBalancer";
  const { openings, refused } = nodePortOpenings(cases.map(([s]) => s), ["shop"]);
  assertEquals(openings, []);
  assertEquals(refused.length, cases.length);
  for (const [service, pattern] of cases) {
    const name = `${service.metadata!.namespace}/${service.metadata!.name}`;
    const message = refused.find((r) => r.service === name)?.message ?? `${name}: not refused`;
    assertMatch(message, pattern);
    assertMatch(message, /the firewall opens nothing for this Service$/);
  }
  // A deleted Service asks for nothing (its rules go with it).
  const asked = nodePort("gone", { ask: "true" });
  const gone = { ...asked, metadata: { ...asked.metadata, deletionTimestamp: "2026-11-27T12:00:00Z" } };
  assertEquals(nodePortOpenings([gone], "*"), { openings: [], refused: [] });
});
