/**
 * What a PKCS#10 certificate request (RFC 2986) asks for: its subject's common name and
 * organizations, and its subject alternative names. A small DER reader, enough for the requests a
 * kubelet sends; the signature is not checked here (the apiserver refuses a request whose signature
 * does not verify when it is created).
 *
 * @module
 */
import { formatIp } from "./cidr.ts";

/** What a certificate request asks for. */
export interface CertificateRequest {
  /** The subject's CN (`system:node:<name>` for a kubelet). */
  commonName?: string;
  /** The subject's O values. */
  organizations: string[];
  /** Subject alternative names of type DNS. */
  dnsNames: string[];
  /** Subject alternative names of type IP, in their usual text form (IPv6 compressed, lower case). */
  ipAddresses: string[];
  /** Subject alternative names of type email. */
  emailAddresses: string[];
  /** Subject alternative names of type URI. */
  uris: string[];
  /** Names of other types (directory names, say), counted. */
  otherNames: number;
}

/** A malformed request; the message says what was wrong, never the request's content. */
export class CertificateRequestError extends Error {
  /** `message` names what could not be read. */
  constructor(message: string) {
    super(message);
    this.name = "CertificateRequestError";
  }
}

interface Tlv {
  tag: number;
  value: Uint8Array;
}

const OID_CN = "2.5.4.3";
const OID_O = "2.5.4.10";
const OID_EXTENSION_REQUEST = "1.2.840.113549.1.9.14";
const OID_SAN = "2.5.29.17";

/** Reads a PEM `CERTIFICATE REQUEST` (or `NEW CERTIFICATE REQUEST`); throws {@link CertificateRequestError}. */
export function parseCertificateRequest(pem: string): CertificateRequest {
  const match = pem.match(
    /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([\s\S]*?)-----END (?:NEW )?CERTIFICATE REQUEST-----/,
  );
  if (!match) throw new CertificateRequestError("no PEM CERTIFICATE REQUEST block");
  let der: Uint8Array;
  try {
    der = Uint8Array.from(atob(match[1].replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  } catch {
    throw new CertificateRequestError("the PEM block is not base64");
  }
  const [request] = children(der, 0x30, "request");
  const [info] = children(request.value, 0x30, "request info", 1);
  const parts = sequence(info.value, "request info");
  if (parts.length < 3 || parts[1].tag !== 0x30) throw new CertificateRequestError("no subject");
  const out: CertificateRequest = {
    organizations: [],
    dnsNames: [],
    ipAddresses: [],
    emailAddresses: [],
    uris: [],
    otherNames: 0,
  };
  for (const rdn of sequence(parts[1].value, "subject")) {
    for (const attribute of sequence(rdn.value, "subject")) {
      const [type, value] = sequence(attribute.value, "subject attribute");
      if (!type || !value || type.tag !== 0x06) throw new CertificateRequestError("bad subject attribute");
      const oid = decodeOid(type.value);
      const text = new TextDecoder().decode(value.value);
      if (oid === OID_CN) out.commonName = text;
      if (oid === OID_O) out.organizations.push(text);
    }
  }
  const attributes = parts.find((p) => p.tag === 0xa0);
  for (const attribute of attributes ? sequence(attributes.value, "attributes") : []) {
    const [type, values] = sequence(attribute.value, "attribute");
    if (type?.tag !== 0x06 || decodeOid(type.value) !== OID_EXTENSION_REQUEST || !values) continue;
    for (const extensions of sequence(values.value, "extension request")) {
      for (const extension of sequence(extensions.value, "extensions")) {
        const fields = sequence(extension.value, "extension");
        if (fields[0]?.tag !== 0x06 || decodeOid(fields[0].value) !== OID_SAN) continue;
        const octets = fields[fields.length - 1];
        if (octets.tag !== 0x04) throw new CertificateRequestError("bad subjectAltName extension");
        const [names] = children(octets.value, 0x30, "subjectAltName");
        readNames(sequence(names.value, "subjectAltName"), out);
      }
    }
  }
  return out;
}

function readNames(names: Tlv[], out: CertificateRequest): void {
  const text = (v: Uint8Array) => new TextDecoder().decode(v);
  for (const name of names) {
    if (name.tag === 0x82) out.dnsNames.push(text(name.value));
    else if (name.tag === 0x87) out.ipAddresses.push(ipText(name.value));
    else if (name.tag === 0x81) out.emailAddresses.push(text(name.value));
    else if (name.tag === 0x86) out.uris.push(text(name.value));
    else out.otherNames++;
  }
}

/** The TLVs inside `bytes`; the first must have `tag`. */
function children(bytes: Uint8Array, tag: number, what: string, min = 1): Tlv[] {
  const items = sequence(bytes, what);
  if (items.length < min || items[0].tag !== tag) throw new CertificateRequestError(`bad ${what}`);
  return items;
}

/** Every TLV in `bytes`, in order. */
function sequence(bytes: Uint8Array, what: string): Tlv[] {
  const items: Tlv[] = [];
  let i = 0;
  while (i < bytes.length) {
    if (i + 2 > bytes.length) throw new CertificateRequestError(`truncated ${what}`);
    const tag = bytes[i++];
    let length = bytes[i++];
    if (length & 0x80) {
      const octets = length & 0x7f;
      if (octets === 0 || octets > 4 || i + octets > bytes.length) {
        throw new CertificateRequestError(`bad length in ${what}`);
      }
      length = 0;
      for (let k = 0; k < octets; k++) length = length * 256 + bytes[i++];
    }
    if (i + length > bytes.length) throw new CertificateRequestError(`truncated ${what}`);
    items.push({ tag, value: bytes.subarray(i, i + length) });
    i += length;
  }
  return items;
}

function decodeOid(bytes: Uint8Array): string {
  if (bytes.length === 0) return "";
  const parts = [Math.floor(bytes[0] / 40), bytes[0] % 40];
  let value = 0;
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join(".");
}

function ipText(bytes: Uint8Array): string {
  if (bytes.length !== 4 && bytes.length !== 16) {
    throw new CertificateRequestError("an IP address of neither 4 nor 16 bytes");
  }
  const value = bytes.reduce((v, byte) => (v << 8n) | BigInt(byte), 0n);
  return formatIp(bytes.length === 4 ? 4 : 6, value);
}
