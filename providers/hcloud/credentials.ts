/**
 * The API token, and whether the API accepts it. A token from `HCLOUD_TOKEN_FILE` is re-read every
 * `recheckMs` and at once after a 401, so a rotated Secret is picked up without a restart; while the
 * API rejects the token, {@link Credentials.problem} says so (for `/readyz`), never showing the token.
 *
 * @module
 */
import { logger } from "../../lib/log.ts";

/** Settings of {@link Credentials}. */
export interface CredentialsOptions {
  /** The token at startup. */
  token: string;
  /** `HCLOUD_TOKEN_FILE`, when the token comes from it. */
  file?: string;
  /** How often the file is read again (default 10 s; a file read, no cloud call). */
  recheckMs?: number;
  /** Reads the file (tests swap it). */
  readFile?: (path: string) => string;
}

/** The current token and the API's last verdict on it. */
export class Credentials {
  readonly #file?: string;
  readonly #recheckMs: number;
  readonly #readFile: (path: string) => string;
  readonly #log = logger("hcloud");
  #token: string;
  #readAt = Date.now();
  #rejected?: { status: number; since: string };

  constructor(options: CredentialsOptions) {
    this.#token = options.token;
    this.#file = options.file;
    this.#recheckMs = options.recheckMs ?? 10_000;
    this.#readFile = options.readFile ?? ((path) => Deno.readTextFileSync(path));
  }

  /** The token to send now (the file re-read when due). */
  token(): string {
    if (this.#file && Date.now() - this.#readAt >= this.#recheckMs) this.#reread();
    return this.#token;
  }

  /**
   * Records the API's answer to a request sent with `sentWith`. After a 401, returns true when the
   * token changed since (re-read from the file): the request is worth sending again at once.
   */
  answered(status: number, sentWith: string): boolean {
    if (status !== 401) {
      if (this.#rejected && sentWith === this.#token) {
        this.#rejected = undefined;
        this.#log.info("the Hetzner Cloud API accepts the token again");
      }
      return false;
    }
    if (this.#file) this.#reread();
    if (this.#token !== sentWith) return true;
    if (!this.#rejected) {
      this.#rejected = { status, since: new Date().toISOString() };
      this.#log.error("the Hetzner Cloud API rejects the token (401 Unauthorized){hint}", {
        hint: this.#file ? `; ${this.#file} is read again every ${this.#recheckMs / 1000} s` : "",
      });
    }
    return false;
  }

  /** Why the cloud cannot be used, for `/readyz` (never the token itself). */
  problem(): string | undefined {
    if (!this.#rejected) return undefined;
    return `the Hetzner Cloud API rejects the token (401 Unauthorized) since ${this.#rejected.since}` +
      (this.#file
        ? `; waiting for a valid token in HCLOUD_TOKEN_FILE (${this.#file})`
        : "; update HCLOUD_TOKEN");
  }

  #reread(): void {
    this.#readAt = Date.now();
    try {
      const token = this.#readFile(this.#file!).trim();
      if (token && token !== this.#token) {
        this.#token = token;
        this.#log.info("read a new token from {file}", { file: this.#file });
      }
    } catch (err) {
      this.#log.warning("cannot read {file}: {error}; keeping the current token", {
        file: this.#file,
        error: (err as Error).message,
      });
    }
  }
}
