/**
 * What the kubelet-serving CSR approver checks, as pure functions: first what the request says of
 * itself (who asks, for which usages, with which subject and names), then its names against the
 * cloud's record of the requesting Node's machine. Each refusal says what to change, naming the
 * field and value; nothing here calls the cloud or the apiserver.
 *
 * @module
 */
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.d.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { MachineRecord } from "../../providers/provider.ts";
import {
  type CertificateRequest,
  CertificateRequestError,
  parseCertificateRequest,
} from "../../lib/pkcs10.ts";
import { cidrContains, parseCidr } from "../../lib/cidr.ts";
import { KUBELET_SERVING_SIGNER, NODE_USER_PREFIX, NODES_GROUP } from "../../kube/well_known.ts";

/** Usages a kubelet serving certificate may have; `server auth` is required. */
const ALLOWED_USAGES = new Set(["digital signature", "key encipherment", "server auth"]);

/** Why a request is refused: a short reason (event reason, metric label) and a message for a person. */
export interface Refusal {
  reason: string;
  message: string;
}

/** A request that passed the checks on itself: whose Node it is for and what names it asks for. */
export interface NodeRequest {
  node: string;
  request: CertificateRequest;
}

/** Whether `csr` is for this approver: the kubelet-serving signer, not yet approved or denied. */
export function undecidedServingRequest(csr: CertificateSigningRequest): boolean {
  if (csr.spec?.signerName !== KUBELET_SERVING_SIGNER) return false;
  return !(csr.status?.conditions ?? []).some((c) =>
    (c.type === "Approved" || c.type === "Denied" || c.type === "Failed") && c.status !== "False"
  );
}

/** The checks that need only the request: the requester is a Node, the usages and names fit. */
export function checkRequest(csr: CertificateSigningRequest): NodeRequest | Refusal {
  const user = csr.spec?.username ?? "";
  if (!user.startsWith(NODE_USER_PREFIX) || user.length === NODE_USER_PREFIX.length) {
    return refuse("NotANode", `requested by "${user}", not by a kubelet (user system:node:<name>)`);
  }
  if (!(csr.spec?.groups ?? []).includes(NODES_GROUP)) {
    return refuse("NotANode", `requested by "${user}" outside the group ${NODES_GROUP}`);
  }
  const usages = csr.spec?.usages ?? [];
  const extra = usages.filter((u) => !ALLOWED_USAGES.has(u));
  if (extra.length || !usages.includes("server auth")) {
    return refuse(
      "BadUsages",
      `spec.usages ${JSON.stringify(usages)}: a kubelet serving certificate has "server auth" and at most ` +
        `"digital signature" and "key encipherment"`,
    );
  }
  let request: CertificateRequest;
  try {
    request = parseCertificateRequest(atob(csr.spec?.request ?? ""));
  } catch (err) {
    const why = err instanceof CertificateRequestError ? err.message : "not base64";
    return refuse("BadRequest", `spec.request cannot be read: ${why}`);
  }
  if (request.commonName !== user) {
    return refuse(
      "SubjectMismatch",
      `subject CN "${request.commonName ?? ""}" is not the requester "${user}"`,
    );
  }
  if (request.organizations.length !== 1 || request.organizations[0] !== NODES_GROUP) {
    return refuse(
      "SubjectMismatch",
      `subject O ${JSON.stringify(request.organizations)}: must be exactly ["${NODES_GROUP}"]`,
    );
  }
  if (request.emailAddresses.length || request.uris.length || request.otherNames) {
    const names = [...request.emailAddresses, ...request.uris];
    return refuse(
      "ForeignName",
      `the request names ${
        names.length ? JSON.stringify(names) : "a name"
      } a serving certificate has no use for ` +
        `(only DNS names and IP addresses)`,
    );
  }
  if (!request.dnsNames.length && !request.ipAddresses.length) {
    return refuse("NoNames", "the request names no DNS name or IP address");
  }
  return { node: user.slice(NODE_USER_PREFIX.length), request };
}

/**
 * The names of `request` against the cloud's record of `node`'s machine: every DNS name is the
 * Node's or the machine's name, every IP address one the cloud routes to the machine.
 */
export function checkNames(
  request: CertificateRequest,
  node: Node,
  record: MachineRecord,
  others: Node[] = [],
): Refusal | undefined {
  const names = new Set([node.metadata?.name ?? "", ...record.names]);
  const foreignName = request.dnsNames.find((n) => !names.has(n));
  if (foreignName !== undefined) {
    return refuse(
      "ForeignName",
      `DNS name "${foreignName}" is not the Node's or its machine's name (${[...names].join(", ")})`,
    );
  }
  const cidrs = record.cidrs.map((c) => parseCidr(c)).filter((c) => c !== undefined);
  const foreignIp = request.ipAddresses.find((ip) => !cidrs.some((c) => cidrContains(c, ip)));
  if (foreignIp !== undefined) {
    return refuse(
      "ForeignAddress",
      `IP address ${foreignIp} is not one the cloud gives machine ${record.providerID} (${
        record.cidrs.join(", ")
      })`,
    );
  }
  // An address of a network that may overlap, which another Node reports: its, not this one's (P5).
  const shared = (record.sharedCidrs ?? []).map((c) => parseCidr(c)).filter((c) => c !== undefined);
  for (const ip of request.ipAddresses) {
    if (!shared.some((c) => cidrContains(c, ip))) continue;
    const holder = others.find((n) =>
      n !== node && (n.status?.addresses ?? []).some((a) => a.address === ip && a.type !== "Hostname")
    );
    if (holder) {
      return refuse(
        "AddressOfAnotherNode",
        `IP address ${ip} is machine ${record.providerID}'s in a private network, but Node ` +
          `${holder.metadata?.name} reports it too (networks can overlap)` +
          (record.sharedCidrsAdvice ? `; ${record.sharedCidrsAdvice}` : ""),
      );
    }
  }
  return undefined;
}

/** Whether `result` is a refusal. */
export function refused(result: object | undefined): result is Refusal {
  return result !== undefined && "reason" in result;
}

function refuse(reason: string, message: string): Refusal {
  return { reason, message };
}
