import { assertEquals } from "../../../../testing/assert.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { driftOf, type DriftRecord, listClusterLoadBalancers } from "./drift.ts";
import { parseLoadBalancerSpec } from "../spec/mod.ts";
import type { DesiredService } from "../core/desired.ts";
import { type components, HcloudClient } from "../../../../hcloud_api/mod.ts";

type LB = components["schemas"]["load_balancer"];
const OWNED = { "hcloud-ccm/service-uid": "uid-1", "deno-ccm/cluster-id": "c1" };
const PORT_80: DesiredService = {
  listen_port: 80,
  destination_port: 30080,
  protocol: "tcp",
  proxyprotocol: false,
  health_check: { protocol: "tcp", port: 30080 },
} as DesiredService;

function lb(patch: Partial<LB> = {}): LB {
  return {
    id: 7,
    name: "web",
    labels: OWNED,
    algorithm: { type: "round_robin" },
    load_balancer_type: { name: "lb11", max_targets: 2 },
    public_net: { enabled: true, ipv4: { ip: "192.0.2.1" }, ipv6: { ip: "2001:db8::1" } },
    protection: { delete: false },
    private_net: [{ network: 3, ip: "10.0.0.9" }],
    services: [{
      ...PORT_80,
      health_check: { ...PORT_80.health_check, interval: 15, timeout: 10, retries: 3 },
    }],
    targets: [{ type: "server", server: { id: 1 }, use_private_ip: false }],
    ...patch,
  } as LB;
}

function record(patch: Partial<DriftRecord> = {}): DriftRecord {
  const service: Service = { metadata: { name: "web", uid: "uid-1", annotations: {} } };
  const { spec } = parseLoadBalancerSpec(service, {
    enabled: true,
    disablePrivateIngress: false,
    usePrivateIp: false,
    disableIpv6: false,
  });
  return {
    serviceUid: "uid-1",
    clusterId: "c1",
    spec,
    services: [PORT_80],
    targets: { serverIds: [1] },
    networkId: 3,
    ...patch,
  };
}

Deno.test("lb drift: what a sync would change, in words; nothing when in step", () => {
  const server = (id: number) => ({ type: "server" as const, server: { id }, use_private_ip: false });
  const cases: [string, LB, DriftRecord, string[]][] = [
    ["in step", lb(), record(), []],
    ["a service deleted in the console", lb({ services: [] }), record(), ["service on port 80 deleted"]],
    [
      "a service added in the console",
      lb({ services: [...lb().services, { ...lb().services[0], listen_port: 81 }] }),
      record(),
      [
        "service on port 81 added",
      ],
    ],
    [
      "a changed health check port",
      lb({ services: [{ ...PORT_80, health_check: { protocol: "tcp", port: 1 } }] as LB["services"] }),
      record(),
      ["service on port 80 changed"],
    ],
    ["a removed target", lb({ targets: [] }), record(), ["target removed"]],
    ["a foreign target added", lb({ targets: [server(1), server(9)] }), record(), ["target added"]],
    [
      "a target the type has no room for is not drift",
      lb({ targets: [server(1), server(2)] }),
      record({ targets: { serverIds: [1, 2, 3] } }),
      [],
    ],
    ["detached from the network", lb({ private_net: [] }), record(), ["not attached to network 3"]],
    ["the algorithm changed", lb({ algorithm: { type: "least_connections" } }), record(), []],
    [
      "an annotated algorithm changed",
      lb({ algorithm: { type: "least_connections" } }),
      record({ spec: { ...record().spec, algorithm: "round_robin" } }),
      ["algorithm changed"],
    ],
    ["our owner label removed", lb({ labels: { "deno-ccm/cluster-id": "c1" } }), record(), [
      "labels or name changed",
    ]],
    [
      "a label-selector target replaced by a server target",
      lb({ targets: [server(1)] }),
      record({ targets: { selector: "deno-ccm/c1=true" } }),
      ["target removed", "target added"],
    ],
    ["Robot IP targets changed", lb(), record({ ipTargets: "203.0.113.5" }), ["IP targets changed"]],
  ];
  for (const [name, current, asked, want] of cases) assertEquals(driftOf(current, asked), want, name);
});

Deno.test("lb drift: 50 balancers over 5000 servers are one request; each is seen whole, then kept without its resolved servers", async () => {
  const requests: string[] = [];
  const balancer = (id: number) => ({
    id,
    name: `lb-${id}`,
    labels: { "deno-ccm/cluster-id": "c1" },
    targets: [{
      type: "label_selector",
      label_selector: { selector: "x" },
      targets: Array.from({ length: 5000 }, (_, s) => ({
        type: "server",
        server: { id: s },
        health_status: [{ listen_port: 80, status: "healthy" }],
      })),
    }],
  });
  const fetch = (input: Request | URL | string) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    requests.push(url.search);
    const page = { load_balancers: Array.from({ length: 50 }, (_, i) => balancer(i + 1)), meta: {} };
    return Promise.resolve(
      new Response(JSON.stringify(page), { headers: { "content-type": "application/json" } }),
    );
  };
  const client = new HcloudClient({ endpoint: "http://sim/v1", token: "t", fetch, retryBaseMs: 1 });
  const resolved: number[] = [];
  const listed = await listClusterLoadBalancers(client, "c1", (lb) => {
    resolved.push((lb.targets[0] as { targets?: unknown[] }).targets?.length ?? 0);
  });
  assertEquals(requests.length, 1);
  assertEquals(new URLSearchParams(requests[0]).get("per_page"), "50");
  assertEquals(listed.map((lb) => lb.id), Array.from({ length: 50 }, (_, i) => i + 1));
  assertEquals(resolved, Array(50).fill(5000), "the sample sees every resolved server");
  assertEquals(listed.every((lb) => !("targets" in lb.targets[0])), true, "kept without them");
});
