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

import { createHmac } from "node:crypto";

const CONTEXT = "deno-ccm/record-seal/v1\n";

/** Signs and checks records (see the module doc). */
export class RecordSeal {
  readonly #secrets: () => string[];

  /** `secrets`: the tokens that seal (the first) and verify (any), newest first. */
  constructor(secrets: () => string[]) {
    this.#secrets = secrets;
  }

  /** The seal of `text` with the current secret (a promise, as before; computed at once). */
  seal(text: string): Promise<string> {
    const [secret] = this.#secrets();
    if (!secret) return Promise.reject(new Error("no secret to seal records with"));
    return Promise.resolve(this.#mac(secret, text));
  }

  /** Whether `seal` was made for `text` by any secret this process knows. */
  verify(text: string, seal: unknown): Promise<boolean> {
    if (typeof seal !== "string" || seal.length === 0) return Promise.resolve(false);
    return Promise.resolve(this.#secrets().some((secret) => timingSafeEqual(this.#mac(secret, text), seal)));
  }

  // Synchronous (node:crypto): a seal takes microseconds, and WebCrypto's promise settled on a worker
  // thread, so the order of a run's requests depended on the machine's timing (no seed replayed it).
  #mac(secret: string, text: string): string {
    const mac = createHmac("sha256", secret).update(CONTEXT + text).digest();
    // 128 bits are plenty for a seal nobody can test offline; base64url keeps it short in an annotation.
    return mac.subarray(0, 16).toString("base64url");
  }
}

function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
