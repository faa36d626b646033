/**
 * The kubelet-serving CSR approver against the fake provider's machine records and an in-memory
 * apiserver: deny or leave, and a request that waits for its Node's initialization.
 */
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.d.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../testing/assert.ts";
import { newController } from "../../testing/controller_harness.ts";
import { FakeProvider } from "../../providers/fake/fake_provider.ts";
import { eventually } from "../../testing/helpers.ts";
import { makeCertificateRequest, servingCsr } from "../../testing/csr.ts";
import { NODES } from "../../kube/resources.ts";
import { csrApproverController } from "./csr_approver.ts";

const KUBELET = { username: "system:node:web-1", groups: ["system:nodes"] };

async function setup(
  args: string[] = [],
  providerID: string | null = "fake://web-1",
  labels: Record<string, string> = {},
) {
  const fake = new FakeProvider();
  fake.addMachine("web-1", {
    nodeAddresses: [{ type: "Hostname", address: "web-1" }, { type: "ExternalIP", address: "203.0.113.7" }],
  });
  const t = newController(csrApproverController, fake, args);
  const node: Node = { metadata: { name: "web-1", labels }, spec: providerID ? { providerID } : {} };
  t.apiserver.seed("nodes", node);
  const own = await makeCertificateRequest({ commonName: "system:node:web-1", ipAddresses: ["203.0.113.7"] });
  const foreign = await makeCertificateRequest({
    commonName: "system:node:web-1",
    ipAddresses: ["203.0.113.8"],
  });
  t.apiserver.seed("certificatesigningrequests", servingCsr("own", own, KUBELET));
  t.apiserver.seed("certificatesigningrequests", servingCsr("foreign", foreign, KUBELET));
  const decision = (name: string) => {
    const csr = t.apiserver.object<CertificateSigningRequest>("certificatesigningrequests", name)!;
    const c = (csr.status?.conditions ?? [])[0];
    return c ? `${c.type} ${c.reason}` : "pending";
  };
  const reasons = () =>
    t.apiserver.objects<{ reason?: string; type?: string }>("events").map((e) => `${e.type} ${e.reason}`);
  return { fake, t, decision, reasons };
}

Deno.test("csr approver (fake provider): the machine's own address is approved, another one denied with an event", async () => {
  const { t, decision, reasons } = await setup();
  await t.runWhile(async () => {
    await eventually(() => decision("own") !== "pending" && decision("foreign") !== "pending", 5_000);
    assertEquals([decision("own"), decision("foreign")], ["Approved AutoApproved", "Denied ForeignAddress"]);
    await eventually(() => reasons().includes("Warning ForeignAddress"), 5_000);
  });
});

Deno.test("csr approver (fake provider): --kubelet-serving-csr-deny=false leaves a refused request for another approver", async () => {
  const { t, decision, reasons } = await setup(["--kubelet-serving-csr-deny=false"]);
  await t.runWhile(async () => {
    await eventually(
      () => decision("own") !== "pending" && reasons().includes("Warning ForeignAddress"),
      5_000,
    );
    assertEquals([decision("own"), decision("foreign")], ["Approved AutoApproved", "pending"]);
  });
});

Deno.test("csr approver (fake provider): a request from a Node not initialized yet waits, and is decided once it is", async () => {
  const { t, decision, fake } = await setup([], null);
  await t.runWhile(async () => {
    await new Promise((r) => setTimeout(r, 200));
    assertEquals(fake.callsOf("machine-record"), [], "nothing to look up for a Node without a provider ID");
    assertEquals(decision("own"), "pending");
    await t.client.patch(NODES, "web-1", "merge", { spec: { providerID: "fake://web-1" } });
    await eventually(() => decision("own") === "Approved AutoApproved", 5_000);
    assertEquals(decision("foreign"), "Denied ForeignAddress");
  });
});

Deno.test("csr approver (fake provider): a Node that is not the cloud's is left to another approver, quietly", async () => {
  const { fake, t, decision, reasons } = await setup([], null, { "node.deno-ccm.io/managed": "false" });
  await t.runFor(600);
  assertEquals([decision("own"), decision("foreign")], ["pending", "pending"]);
  assertEquals(reasons(), []);
  assertEquals(fake.calls.filter((c) => c.startsWith("machine-record")), []);
});
