import { assertEquals } from "../../../../testing/assert.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import {
  type LbAction,
  planExposure,
  planLabelTarget,
  planServerTargets,
  planServices,
  planShape,
} from "./plan.ts";
import { parseLoadBalancerSpec } from "../spec/mod.ts";
import type { components } from "../../../../hcloud_api/mod.ts";

type LB = components["schemas"]["load_balancer"];
const P = "load-balancer.hetzner.cloud/";
const OWNED = { "hcloud-ccm/service-uid": "uid-1", "deno-ccm/cluster-id": "c1" };

function lb(patch: Partial<LB> = {}): LB {
  return {
    id: 7,
    name: "web",
    labels: OWNED,
    algorithm: { type: "round_robin" },
    load_balancer_type: { name: "lb11" },
    public_net: {
      enabled: true,
      ipv4: { ip: "192.0.2.1", dns_ptr: "static.example" },
      ipv6: { ip: "2001:db8::1", dns_ptr: "" },
    },
    protection: { delete: false },
    ...patch,
  } as LB;
}
function spec(annotations: Record<string, string>) {
  const service: Service = { metadata: { name: "web", uid: "uid-1", annotations } };
  return parseLoadBalancerSpec(service, {
    enabled: true,
    disablePrivateIngress: false,
    usePrivateIp: false,
    disableIpv6: false,
  }).spec;
}
const owner = { serviceUid: "uid-1", clusterId: "c1" };

Deno.test("lb plan: each annotation that differs from the balancer becomes one action, in order", () => {
  const cases: [string, LB, Record<string, string>, LbAction[]][] = [
    ["in step: nothing", lb(), {}, []],
    ["a foreign or missing owner label is set, others kept", lb({ labels: { team: "x" } }), {}, [
      { kind: "update", labels: { team: "x", ...OWNED } },
    ]],
    ["rename", lb(), { [`${P}name`]: "shop" }, [{ kind: "update", labels: OWNED, name: "shop" }]],
    ["rDNS of both families", lb(), { [`${P}ipv4-rdns`]: "a.example", [`${P}ipv6-rdns`]: "b.example" }, [
      { kind: "change_dns_ptr", ip: "192.0.2.1", dnsPtr: "a.example" },
      { kind: "change_dns_ptr", ip: "2001:db8::1", dnsPtr: "b.example" },
    ]],
    ["the same rDNS: nothing", lb(), { [`${P}ipv4-rdns`]: "static.example" }, []],
    ["algorithm then type", lb(), { [`${P}algorithm-type`]: "least_connections", [`${P}type`]: "lb21" }, [
      { kind: "change_algorithm", algorithm: "least_connections" },
      { kind: "change_type", type: "lb21" },
    ]],
  ];
  for (const [name, current, annotations, want] of cases) {
    assertEquals(planShape(current, spec(annotations), owner), want, name);
  }
});

Deno.test("lb plan: public interface and protection follow only what is annotated", () => {
  assertEquals(planExposure(lb(), spec({})), []);
  assertEquals(
    planExposure(lb(), spec({ [`${P}disable-public-network`]: "true", [`${P}protection-delete`]: "true" })),
    [
      { kind: "public_interface", enabled: false },
      { kind: "change_protection", delete: true },
    ],
  );
  const off = lb({ public_net: { ...lb().public_net, enabled: false } });
  assertEquals(planExposure(off, spec({ [`${P}disable-public-network`]: "false" })), [
    { kind: "public_interface", enabled: true },
  ]);
  assertEquals(planExposure(off, spec({})), [], "not annotated: left as it is");
});

Deno.test("lb plan: unwanted ports are deleted first, missing ones added, changed ones updated", () => {
  const want = (port: number, destination: number) => ({
    listen_port: port,
    destination_port: destination,
    protocol: "tcp" as const,
    proxyprotocol: false,
    health_check: { protocol: "tcp" as const, port: destination, interval: 15, timeout: 10, retries: 3 },
  });
  const current = lb({ services: [want(80, 30080), want(8080, 30808)] } as unknown as Partial<LB>);
  const actions = planServices(current, [want(80, 31000), want(443, 30443)]);
  assertEquals(
    actions.map((
      a,
    ) => [a.kind, "listenPort" in a ? a.listenPort : "service" in a ? a.service.listen_port : 0]),
    [
      ["delete_service", 8080],
      ["update_service", 80],
      ["add_service", 443],
    ],
  );
  assertEquals(planServices(current, [want(80, 30080), want(8080, 30808)]), [], "in step: nothing");
});

Deno.test("lb plan: the update that ends a redirect goes before the add of port 80 it holds", () => {
  const tcp = (port: number) => ({
    listen_port: port,
    destination_port: 30000 + port,
    protocol: "tcp" as const,
    proxyprotocol: false,
    health_check: { protocol: "tcp" as const, port: 30000 + port },
  });
  const redirecting = { ...tcp(443), protocol: "https", http: { redirect_http: true, certificates: [1] } };
  const current = lb({ services: [redirecting] } as unknown as Partial<LB>);
  const kinds = planServices(current, [tcp(80), tcp(443)]).map((a) =>
    `${a.kind} ${"service" in a ? a.service.listen_port : ""}`
  );
  assertEquals(kinds, ["update_service 443", "add_service 80"]);
});

Deno.test("lb plan: a label-selector target replaces server targets add-first; Robot IP targets stay", () => {
  const current = lb({
    targets: [
      { type: "server", server: { id: 1 }, use_private_ip: false },
      { type: "ip", ip: { ip: "198.51.100.1" } },
    ],
  } as unknown as Partial<LB>);
  assertEquals(planLabelTarget(current, "k=v", false), [
    {
      kind: "add_target",
      target: { type: "label_selector", label_selector: { selector: "k=v" }, use_private_ip: false },
    },
    { kind: "remove_target", target: { type: "server", server: { id: 1 } } },
  ]);
  const flagged = lb({
    targets: [{ type: "label_selector", label_selector: { selector: "k=v" }, use_private_ip: false }],
  } as unknown as Partial<LB>);
  assertEquals(planLabelTarget(flagged, "k=v", false), [], "in step: nothing");
  assertEquals(planLabelTarget(flagged, "k=v", true).map((a) => a.kind), ["remove_target", "add_target"]);
});

Deno.test("lb plan: server targets: stale and wrong-flag ones removed first, missing ones added in order", () => {
  const current = lb({
    targets: [
      { type: "server", server: { id: 1 }, use_private_ip: false },
      { type: "server", server: { id: 2 }, use_private_ip: true },
      { type: "server", server: { id: 9 }, use_private_ip: false },
      { type: "ip", ip: { ip: "198.51.100.1" } },
    ],
  } as unknown as Partial<LB>);
  const plan = planServerTargets(current, [1, 2, 3], false);
  assertEquals(
    plan.map((a) => `${a.kind} ${"target" in a && a.target.type === "server" ? a.target.server.id : "?"}`),
    ["remove_target 2", "remove_target 9", "add_target 2", "add_target 3"],
  );
});
