/**
 * Real certificate signing requests for tests, made by openssl (as a kubelet's would be: an EC key,
 * a subject and subject alternative names), wrapped in a CertificateSigningRequest object.
 *
 * @module
 */
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.d.ts";

/** What to ask for. */
export interface CsrOptions {
  /** Subject CN, e.g. `system:node:web-1`. */
  commonName: string;
  /** Subject O values (default `system:nodes`). */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
}

/** A PEM PKCS#10 request with a fresh key. */
export async function makeCertificateRequest(options: CsrOptions): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "deno-ccm-csr-" });
  try {
    const subject = [
      ...(options.organizations ?? ["system:nodes"]).map((o) => `/O=${o}`),
      `/CN=${options.commonName}`,
    ]
      .join("");
    const sans = [
      ...(options.dnsNames ?? []).map((n) => `DNS:${n}`),
      ...(options.ipAddresses ?? []).map((ip) => `IP:${ip}`),
    ];
    const args = ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    args.push("-keyout", `${dir}/key.pem`, "-out", `${dir}/req.pem`, "-subj", subject);
    if (sans.length) args.push("-addext", `subjectAltName=${sans.join(",")}`);
    const out = await new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" }).output().catch(
      () => {
        throw new Error("openssl is needed to make certificate requests (Debian: apt-get install openssl)");
      },
    );
    if (!out.success) throw new Error(`openssl req failed: ${new TextDecoder().decode(out.stderr)}`);
    return await Deno.readTextFile(`${dir}/req.pem`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A kubelet-serving CertificateSigningRequest object for `pem` (username and groups as given). */
export function servingCsr(
  name: string,
  pem: string,
  options: { username?: string; groups?: string[]; usages?: string[] } = {},
): CertificateSigningRequest {
  return {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: {
      request: btoa(pem),
      signerName: "kubernetes.io/kubelet-serving",
      usages: options.usages ?? ["digital signature", "server auth"],
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.groups !== undefined ? { groups: options.groups } : {}),
    },
  };
}
