/**
 * Seals for the records the CCM keeps on Kubernetes objects that tenants can write (a Service's
 * annotations): an HMAC over the record and the object it belongs to, keyed from the cloud token,
 * which no tenant knows. A record whose seal does not verify is not the CCM's and counts as none, so a
 * forged or copied record can never make the CCM remove or rewrite what it names (security probe N1).
 *
 * Every token this process has used verifies (a record sealed before a rotation stays valid and is
 * sealed again with the new token at its next write); after a restart with a new token only, older
 * records count as none, which is safe: nothing is removed on their word.
 *
 * @module
 */

const CONTEXT = "deno-ccm/record-seal/v1\n";
const encoder = new TextEncoder();

/** Signs and checks records (see the module doc). */
export class RecordSeal {
  readonly #secrets: () => string[];
  readonly #keys = new Map<string, Promise<CryptoKey>>();

  /** `secrets`: the tokens that seal (the first) and verify (any), newest first. */
  constructor(secrets: () => string[]) {
    this.#secrets = secrets;
  }

  /** The seal of `text` with the current secret. */
  async seal(text: string): Promise<string> {
    const [secret] = this.#secrets();
    if (!secret) throw new Error("no secret to seal records with");
    return await this.#mac(secret, text);
  }

  /** Whether `seal` was made for `text` by any secret this process knows. */
  async verify(text: string, seal: unknown): Promise<boolean> {
    if (typeof seal !== "string" || seal.length === 0) return false;
    for (const secret of this.#secrets()) {
      if (timingSafeEqual(await this.#mac(secret, text), seal)) return true;
    }
    return false;
  }

  async #mac(secret: string, text: string): Promise<string> {
    let key = this.#keys.get(secret);
    if (!key) {
      key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
      ]);
      this.#keys.set(secret, key);
    }
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(CONTEXT + text)));
    // 128 bits are plenty for a seal nobody can test offline; base64url keeps it short in an annotation.
    return btoa(String.fromCharCode(...mac.slice(0, 16))).replaceAll("+", "-").replaceAll("/", "_")
      .replace(/=+$/, "");
  }
}

function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
