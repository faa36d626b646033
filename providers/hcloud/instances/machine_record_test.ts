/**
 * The machine record against the simulator, as node IPAM reads it: a Cloud server's /64 and a Robot
 * server's, and what it costs. Right after a Node's initialization the record is read from the list
 * the initialization read (no request of its own); asked later, from any list at most minutes old.
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../../testing/assert.ts";
import { startTestSim } from "../../../testing/sim_harness.ts";
import { providerOnSim } from "../../../testing/provider_on_sim.ts";
import { applySeed } from "../../../hcloud_sim/control.ts";

Deno.test("machine record: each server's IPv6 /64 (Cloud and Robot); node IPAM's read costs no request after the initialization's", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  const provider = await providerOnSim(t, {
    ROBOT_ENABLED: "true",
    ROBOT_USER: "robot-user",
    ROBOT_PASSWORD: "robot-password",
    ROBOT_ENDPOINT: t.sim.robotEndpoint,
    // Every list is stale at once for a current answer: only the purpose keeps one from being read.
    HCLOUD_SERVER_CACHE_MAX_AGE: "1ms",
  });
  try {
    const cloud = t.sim.addServer({ name: "w1", location: "fsn1" });
    const bm = t.sim.robot.add({ server_name: "bm-1", product: "AX41-NVMe", dc: "FSN1-DC14" });
    const node = (name: string): Node => ({
      metadata: { name, creationTimestamp: new Date().toISOString() },
    });
    const instances = provider.instances!;
    const w1 = node("w1");
    const meta = await instances.instanceMetadata(w1, "initialize");
    const requests = t.sim.audit.length;
    w1.spec = { providerID: meta!.providerID };
    const record = await instances.machineRecord!(w1, "initialize");
    assertEquals(record?.cidrs.filter((c) => c.includes(":")), [cloud.public_net.ipv6!.ip]);
    assertEquals(t.sim.audit.length - requests, 0, "the initialization's list serves");
    await new Promise((r) => setTimeout(r, 5));
    await instances.machineRecord!(w1, "initialize");
    assertEquals(t.sim.audit.length - requests, 0, "and keeps serving the periodic check");
    await instances.machineRecord!(w1);
    assertEquals(
      t.sim.audit.length - requests > 0,
      true,
      "a current answer (the CSR approver's) reads again",
    );

    const bmNode = node("bm-1");
    const bmMeta = await instances.instanceMetadata(bmNode, "initialize");
    bmNode.spec = { providerID: bmMeta!.providerID };
    const bmRecord = await instances.machineRecord!(bmNode, "initialize");
    assertEquals(bmRecord?.cidrs.filter((c) => c.includes(":")), [`${bm.server_ipv6_net}/64`]);
  } finally {
    await t.finish();
  }
});

Deno.test("machine record: without HCLOUD_NETWORK a private address may be another machine's too, and the record names the setting that fixes it", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  applySeed(t.sim, {
    networks: [{
      name: "k8s",
      ip_range: "10.0.0.0/8",
      subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
    }],
  });
  try {
    const server = t.sim.addServer({ name: "w1", location: "fsn1", private_net: [{ network: "k8s" }] });
    const ip = server.private_net[0].ip;
    const node: Node = { metadata: { name: "w1" }, spec: { providerID: `hcloud://${server.id}` } };
    const without = await (await providerOnSim(t)).instances.machineRecord!(node);
    assertEquals(without?.sharedCidrs, [`${ip}/32`]);
    assertEquals(
      without?.sharedCidrsAdvice,
      "set HCLOUD_NETWORK so that only the cluster network's address counts",
    );
    const within = await (await providerOnSim(t, { HCLOUD_NETWORK: "k8s" })).instances.machineRecord!(node);
    assertEquals(
      [within?.sharedCidrs, within?.sharedCidrsAdvice],
      [[], undefined],
      "nothing shared, nothing to advise",
    );
  } finally {
    await t.finish();
  }
});
