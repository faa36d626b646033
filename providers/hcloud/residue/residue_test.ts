import { assertEquals } from "../../../testing/assert.ts";
import { startTestSim } from "../../../testing/sim_harness.ts";
import { HcloudClient } from "../../../hcloud_api/mod.ts";
import { DEFAULT_SIM_TOKEN } from "../../../hcloud_sim/simulator.ts";
import { CLUSTER_ID_LABEL, TARGET_LABEL } from "../names.ts";
import { findResidue } from "./residue.ts";

Deno.test("residue: a co-managed balancer (made outside, attach-to/id) keeps the target its added ports reach the Nodes by; listed with the commands", async () => {
  const t = await startTestSim();
  try {
    const server = t.sim.addServer({ name: "cp-1" });
    const worker = t.sim.addServer({ name: "w-1", labels: { [TARGET_LABEL]: "c1" } });
    const selector = { type: "label_selector", label_selector: { selector: `${TARGET_LABEL}=c1` } };
    // Terraform's balancer (its own target: the control plane), which ours co-managed.
    const made = await t.api("POST", "/load_balancers", {
      name: "terraform-lb",
      load_balancer_type: "lb11",
      location: "fsn1",
      labels: { "deno-ccm/namespace": "ingress" },
      targets: [{ type: "server", server: { id: server.id } }, selector],
    });
    // One of ours, adopted from the official CCM: its server targets came first.
    await t.api("POST", "/load_balancers", {
      name: "a-ours",
      load_balancer_type: "lb11",
      location: "fsn1",
      labels: { [CLUSTER_ID_LABEL]: "c1" },
      targets: [{ type: "server", server: { id: worker.id } }, selector],
    });
    const client = new HcloudClient({ endpoint: t.sim.endpoint, token: DEFAULT_SIM_TOKEN, maxRetries: 0 });
    const items = await findResidue(client, "c1");
    const on = (name: string) =>
      items.filter((i) => i.name === name).map((i) => [i.kind, i.kept !== undefined]);
    assertEquals(on("terraform-lb"), [["selector-target", true], ["co-managed-balancer", true]]);
    assertEquals(on("a-ours"), [["selector-target", false], ["balancer-labels", false]]);
    // The labels the kept target follows stay too.
    assertEquals(on("w-1"), [["server-label", true]]);
    const co = items.find((i) => i.kind === "co-managed-balancer")!;
    assertEquals(co.id, made.body.load_balancer.id);
    assertEquals(
      co.kept!.includes(`remove-target ${co.id} --label-selector ${TARGET_LABEL}=c1`),
      true,
      co.kept,
    );
  } finally {
    await t.finish();
  }
});
