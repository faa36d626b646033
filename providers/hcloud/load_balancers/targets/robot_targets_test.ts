import { assertEquals } from "../../../../testing/assert.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { reconcileIpTargets, robotTargetIps } from "./robot_targets.ts";
import type { RobotServers } from "../../robot/mod.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";

const node = (name: string, providerID: string, internal?: string): Node => ({
  metadata: { name },
  spec: { providerID },
  status: { addresses: internal ? [{ type: "InternalIP", address: internal }] : [] },
});
const servers = {
  get: () =>
    Promise.resolve({
      at: Date.now(),
      byNumber: new Map([[1, { number: 1, name: "bm-1", ipv4: "198.51.100.1", product: "", dc: "" }]]),
      byName: new Map(),
    }),
} as unknown as RobotServers;
const nodes = [
  node("cloud", "hcloud://5"),
  node("bm-1", "hrobot://1", "10.1.0.1"),
  node("bm-2", "hrobot://2"),
];

Deno.test("robot targets: public IPv4 from Robot, InternalIP with use-private-ip, a warning for the unknown", async () => {
  const pub = await robotTargetIps(nodes, false, { enabled: true, servers });
  assertEquals([...pub.ips], [["198.51.100.1", "bm-1"]]);
  assertEquals(pub.warnings.map((w) => [w.reason, w.node]), [["ServerNotFound", "bm-2"]]);
  const priv = await robotTargetIps(nodes, true, { enabled: true, servers });
  assertEquals([...priv.ips], [["10.1.0.1", "bm-1"]]);
  // Without credentials: InternalIPs only, and only with use-private-ip.
  const noCreds = await robotTargetIps(nodes, true, { enabled: true });
  assertEquals([...noCreds.ips], [["10.1.0.1", "bm-1"]]);
  assertEquals(noCreds.warnings.map((w) => w.reason), ["InternalIPNotConfigured"]);
  assertEquals((await robotTargetIps(nodes, false, { enabled: true })).ips.size, 0);
  assertEquals((await robotTargetIps(nodes, false, { enabled: false, servers })).ips.size, 0);
});

Deno.test("robot targets: others' IP targets removed, missing added, a full balancer warned about", async () => {
  const calls: string[] = [];
  let applied = "";
  const warnings: { reason: string; node?: string; message: string }[] = [];
  const changed = await reconcileIpTargets(
    {
      name: "lb",
      targets: [{ type: "ip", ip: { ip: "192.0.2.9" } }, { type: "ip", ip: { ip: "198.51.100.1" } }],
    },
    new Map([["198.51.100.1", "bm-1"], ["198.51.100.2", "bm-2"], ["198.51.100.3", "bm-3"]]),
    warnings,
    {
      remove: (ip) => Promise.resolve(void calls.push(`remove ${ip}`)),
      add: (ip) => {
        if (ip.endsWith(".3")) {
          return Promise.reject(new CloudApiError("full", { status: 403, code: "resource_limit_exceeded" }));
        }
        calls.push(`add ${ip}`);
        return Promise.resolve();
      },
      applied: (ips) => applied = ips,
    },
  );
  assertEquals([changed, calls], [true, ["remove 192.0.2.9", "add 198.51.100.2"]]);
  assertEquals(warnings.map((w) => [w.reason, w.node]), [["MaxTargetsReached", "bm-3"]]);
  assertEquals(applied, "198.51.100.1,198.51.100.2", "the one that did not fit is tried again later");
});
