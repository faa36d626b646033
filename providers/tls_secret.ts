/**
 * A `kubernetes.io/tls` Secret's content as the service controller hands it to a provider: the
 * certificate chain and the private key (PEM). The key is held privately and never shown: logging,
 * inspecting or serializing the object prints the Secret's name only, so no log line, event or error
 * can carry it by accident.
 *
 * @module
 */

/** What a {@link TlsSecret} shows of itself. */
const REDACTED = "[private key redacted]";

/** One TLS Secret's certificate and key; see the module doc. */
export class TlsSecret {
  readonly #privateKey: string;

  /** The Secret `ref`'s content at resourceVersion `version`; the key is kept out of sight. */
  constructor(
    /** `namespace/name` of the Secret. */
    readonly ref: string,
    /** The certificate chain (PEM, `tls.crt`). */
    readonly certificate: string,
    privateKey: string,
    /** The Secret's resourceVersion: a new one means new content. */
    readonly version: string,
  ) {
    this.#privateKey = privateKey;
  }

  /** The private key (PEM, `tls.key`): for the one request that uploads it, nothing else. */
  privateKey(): string {
    return this.#privateKey;
  }

  /** Serialized: the Secret's name and version, the key redacted. */
  toJSON(): Record<string, string> {
    return { ref: this.ref, version: this.version, privateKey: REDACTED };
  }

  /** As text: the Secret's name only. */
  toString(): string {
    return `TlsSecret(${this.ref})`;
  }

  /** As Deno's console and `Deno.inspect` show it: the Secret's name only. */
  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }

  /** As `node:util`'s inspect shows it: the Secret's name only. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}
