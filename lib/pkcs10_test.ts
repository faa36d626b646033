import { assertEquals, assertThrows } from "../testing/assert.ts";
import { CertificateRequestError, parseCertificateRequest } from "./pkcs10.ts";

// openssl req -new -newkey ec -subj "/O=system:nodes/CN=system:node:web-1" -addext "subjectAltName=DNS:web-1,
//   DNS:web-1.example.com,IP:203.0.113.7,IP:2001:db8:1:2::1,IP:10.0.0.2,email:a@b.c,URI:spiffe://x"
const REQUEST = `-----BEGIN CERTIFICATE REQUEST-----
MIIBVDCB/AIBADAzMRUwEwYDVQQKDAxzeXN0ZW06bm9kZXMxGjAYBgNVBAMMEXN5
c3RlbTpub2RlOndlYi0xMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEblurGspH
QW6sHVOa9HO4u5+6fivXpRkXX0Ev04U/ABWIlYrc5Xm0dVYWgKLJUwnwpEHPHAjB
IxeHD7Yb/ugAfKBnMGUGCSqGSIb3DQEJDjFYMFYwVAYDVR0RBE0wS4IFd2ViLTGC
EXdlYi0xLmV4YW1wbGUuY29thwTLAHEHhxAgAQ24AAEAAgAAAAAAAAABhwQKAAAC
gQVhQGIuY4YKc3BpZmZlOi8veDAKBggqhkjOPQQDAgNHADBEAiBT2OV9jbRuFKiJ
gbUOW2T433lgNQlIQhSBsdMiUbL4zgIgHPACRlPIOHTacu8EnsuL1WLuXOEUprAU
b+EJ4Y0+Seg=
-----END CERTIFICATE REQUEST-----`;

Deno.test("pkcs10: subject and every kind of alternative name of a request openssl made", () => {
  assertEquals(parseCertificateRequest(REQUEST), {
    commonName: "system:node:web-1",
    organizations: ["system:nodes"],
    dnsNames: ["web-1", "web-1.example.com"],
    ipAddresses: ["203.0.113.7", "2001:db8:1:2::1", "10.0.0.2"],
    emailAddresses: ["a@b.c"],
    uris: ["spiffe://x"],
    otherNames: 0,
  });
});

Deno.test("pkcs10: what is not a request is an error saying what, never a crash", () => {
  assertThrows(() => parseCertificateRequest("hello"), CertificateRequestError);
  const body = REQUEST.split("\n").slice(1, -1).join("");
  const bytes = Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  const pemOf = (der: Uint8Array) =>
    `-----BEGIN CERTIFICATE REQUEST-----\n${
      btoa(String.fromCharCode(...der))
    }\n-----END CERTIFICATE REQUEST-----`;
  assertThrows(
    () => parseCertificateRequest(pemOf(bytes.slice(0, bytes.length / 2))),
    CertificateRequestError,
  );
  for (let at = 0; at < bytes.length; at += 7) {
    const broken = bytes.slice();
    broken[at] ^= 0xff;
    const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${
      btoa(String.fromCharCode(...broken))
    }\n-----END CERTIFICATE REQUEST-----`;
    try {
      parseCertificateRequest(pem);
    } catch (err) {
      if (!(err instanceof CertificateRequestError)) throw err;
    }
  }
});
