import { assert, assertEquals } from "../../testing/assert.ts";
import { makeCertificateRequest, servingCsr } from "../../testing/csr.ts";
import { checkNames, checkRequest, refused, undecidedServingRequest } from "./csr_checks.ts";

const KUBELET = { username: "system:node:web-1", groups: ["system:nodes", "system:authenticated"] };
const node = { metadata: { name: "web-1" }, spec: { providerID: "hcloud://7" } };
const record = {
  providerID: "hcloud://7",
  names: ["web-1"],
  cidrs: ["203.0.113.7/32", "2001:db8:1:2::/64", "10.0.0.2/32"],
};

async function reasonOf(
  options: Parameters<typeof makeCertificateRequest>[0],
  csr: Parameters<typeof servingCsr>[2] = KUBELET,
): Promise<string> {
  const checked = checkRequest(servingCsr("x", await makeCertificateRequest(options), csr));
  if (refused(checked)) return checked.reason;
  const names = checkNames(checked.request, node, record);
  return names ? names.reason : "approved";
}

Deno.test("csr checks: a kubelet asking for its own machine's names is approved; every other request says why not", async () => {
  const own = { commonName: "system:node:web-1", dnsNames: ["web-1"] };
  assertEquals(
    await reasonOf({
      ...own,
      ipAddresses: ["203.0.113.7", "2001:db8:1:2::1", "2001:db8:1:2::abcd", "10.0.0.2"],
    }),
    "approved",
  );
  // Who asks.
  assertEquals(await reasonOf(own, { username: "admin", groups: ["system:masters"] }), "NotANode");
  assertEquals(
    await reasonOf(own, { username: "system:node:web-1", groups: ["system:authenticated"] }),
    "NotANode",
  );
  // Another Node's identity in the subject, or a subject outside system:nodes.
  assertEquals(await reasonOf({ commonName: "system:node:web-2", dnsNames: ["web-1"] }), "SubjectMismatch");
  assertEquals(await reasonOf({ ...own, organizations: ["system:masters"] }), "SubjectMismatch");
  // Usages.
  assertEquals(
    await reasonOf(own, { ...KUBELET, usages: ["digital signature", "client auth"] }),
    "BadUsages",
  );
  assertEquals(await reasonOf(own, { ...KUBELET, usages: ["digital signature"] }), "BadUsages");
  // Names that are not the machine's.
  assertEquals(await reasonOf({ ...own, dnsNames: ["web-1", "api.example.com"] }), "ForeignName");
  assertEquals(await reasonOf({ ...own, ipAddresses: ["203.0.113.8"] }), "ForeignAddress");
  assertEquals(await reasonOf({ ...own, ipAddresses: ["2001:db8:1:3::1"] }), "ForeignAddress");
  assertEquals(await reasonOf({ commonName: "system:node:web-1" }), "NoNames");
});

Deno.test("csr checks: refusals name the field and value", async () => {
  const pem = await makeCertificateRequest({
    commonName: "system:node:web-1",
    ipAddresses: ["198.51.100.1"],
  });
  const checked = checkRequest(servingCsr("x", pem, KUBELET));
  assert(!refused(checked));
  const why = checkNames(checked.request, node, record)!;
  assert(why.message.includes("198.51.100.1") && why.message.includes("hcloud://7"), why.message);
  const bad = checkRequest({
    ...servingCsr("x", pem, KUBELET),
    spec: { ...servingCsr("x", pem, KUBELET).spec!, request: btoa("junk") },
  });
  assert(
    refused(bad) && bad.reason === "BadRequest" && bad.message.startsWith("spec.request"),
    JSON.stringify(bad),
  );
});

Deno.test("csr checks: only undecided kubelet-serving requests are this approver's", () => {
  const csr = servingCsr("x", "", KUBELET);
  assertEquals(undecidedServingRequest(csr), true);
  assertEquals(
    undecidedServingRequest({
      ...csr,
      spec: { ...csr.spec!, signerName: "kubernetes.io/kube-apiserver-client" },
    }),
    false,
  );
  assertEquals(
    undecidedServingRequest({ ...csr, status: { conditions: [{ type: "Denied", status: "True" }] } }),
    false,
  );
  assertEquals(
    undecidedServingRequest({ ...csr, status: { conditions: [{ type: "Approved", status: "True" }] } }),
    false,
  );
});

Deno.test("csr checks: a private address of an overlapping network that another Node reports is refused (probe P5)", async () => {
  const pem = await makeCertificateRequest({ commonName: "system:node:web-1", ipAddresses: ["10.0.0.3"] });
  const checked = checkRequest(servingCsr("x", pem, KUBELET));
  assert(!refused(checked));
  // Without HCLOUD_NETWORK every network's private IP is the machine's, marked as one that may overlap.
  const shared = {
    ...record,
    cidrs: [...record.cidrs, "10.0.0.3/32"],
    sharedCidrs: ["10.0.0.2/32", "10.0.0.3/32"],
    sharedCidrsAdvice: "name the cluster's network in MYCLOUD_NETWORK",
  };
  const web2 = {
    metadata: { name: "web-2" },
    status: { addresses: [{ type: "InternalIP", address: "10.0.0.3" }] },
  };
  const why = checkNames(checked.request, node, shared, [node, web2]);
  assertEquals(why?.reason, "AddressOfAnotherNode");
  assert(
    why!.message.includes("Node web-2 reports it too") &&
      why!.message.endsWith("(networks can overlap); name the cluster's network in MYCLOUD_NETWORK"),
    why!.message,
  );
  // The advice is the provider's: the approver names no provider's settings of its own.
  const { sharedCidrsAdvice: _, ...silent } = shared;
  assert(checkNames(checked.request, node, silent, [node, web2])!.message.endsWith("(networks can overlap)"));
  assertEquals(checkNames(checked.request, node, shared, [node]), undefined, "nobody else has it");
});
