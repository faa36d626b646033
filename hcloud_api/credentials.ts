/**
 * The API token, and whether the API accepts it. A token from `HCLOUD_TOKEN_FILE` is re-read every
 * `recheckMs` and at once after a 401, so a rotated Secret is picked up without a restart; while the
 * API rejects the token, {@link Credentials.problem} says so (for `/readyz`), never showing the token.
 *
 * A token read from the file is a secret from the moment it is read (redacted everywhere), and it is
 * only used once it is well formed (no whitespace or control characters: a second line would end up
 * in a header and in error texts) and, when a {@link Credentials.verifier} is set, once it is shown
 * to see this project (the provider checks the configured network or a known server): a token of
 * another project would otherwise recreate every balancer there and move every ingress. Until then
 * the previous token stays in use and `/readyz` says why.
 *
 * @module
 */
import { logger, registerSecret } from "../lib/log.ts";
import { readSecretFileSync } from "../lib/secret_file.ts";

/** Whitespace or control characters: never part of a token, and fatal in an HTTP header. */
// deno-lint-ignore no-control-regex -- control characters are exactly what is looked for
const NOT_A_TOKEN = /[\s\x00-\x1f\x7f]/;

/** Why `token` cannot be a token (never quoting it), or undefined. */
export function tokenFormatProblem(token: string): string | undefined {
  const at = token.search(NOT_A_TOKEN);
  if (at < 0) return undefined;
  return `it contains whitespace or a control character (at character ${at + 1}` +
    (token.includes("\n") ? "; the file has more than one line)" : ")");
}

/**
 * Confirms a new token before it is used: resolves to undefined when it sees this project, to the
 * reason otherwise (never the token); throws when the check could not be made (tried again later).
 */
export type TokenVerifier = (token: string) => Promise<string | undefined>;

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
  /** Every token used by this process, newest first (records sealed with an older one stay valid). */
  readonly #used: string[] = [];
  #readAt = Date.now();
  #rejected?: { status: number; since: string };
  /** A token from the file that is not used, and why (for `/readyz`). */
  #refused?: { token: string; why: string; since: string };
  /** A token from the file being verified. */
  #checking?: string;
  /** Set by the provider once it knows what a token of this project must see. */
  verifier?: TokenVerifier;
  readonly #listeners: (() => void)[] = [];

  /** Credentials starting from `options.token` (and following `options.file`, when given). */
  constructor(options: CredentialsOptions) {
    this.#token = options.token;
    this.#used.push(options.token);
    this.#file = options.file;
    this.#recheckMs = options.recheckMs ?? 10_000;
    this.#readFile = options.readFile ?? readSecretFileSync;
  }

  /** The token to send now (the file re-read when due). */
  token(): string {
    this.#rereadIfDue();
    return this.#token;
  }

  #rereadIfDue(): void {
    if (this.#file && Date.now() - this.#readAt >= this.#recheckMs) this.#reread();
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
        this.#changed();
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
    // Asked by /readyz: an idle CCM still notices (and checks) a new file within the period.
    this.#rereadIfDue();
    if (this.#refused) {
      return `the token in HCLOUD_TOKEN_FILE (${this.#file}) is not used: ${this.#refused.why} ` +
        `(since ${this.#refused.since}); the previous token stays in use`;
    }
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
      if (!token || token === this.#token) {
        if (token) this.#refused = undefined; // the file holds the token in use again
        return;
      }
      // A secret from now on, whatever becomes of it (and each line, should it hold several).
      registerSecret(token);
      for (const line of token.split("\n")) registerSecret(line.trim());
      if (token === this.#checking || token === this.#refused?.token) return;
      const malformed = tokenFormatProblem(token);
      if (malformed) return this.#refuse(token, malformed);
      if (!this.verifier) return this.#use(token);
      this.#checking = token;
      this.verifier(token).then(
        (why) => why ? this.#refuse(token, why) : this.#use(token),
        (err) =>
          this.#log.warning(
            "cannot check the new token from {file} yet: {error}; keeping the current token",
            {
              file: this.#file,
              error: (err as Error).message,
            },
          ),
      ).finally(() => {
        if (this.#checking === token) this.#checking = undefined;
      });
    } catch (err) {
      this.#log.warning("cannot read {file}: {error}; keeping the current token", {
        file: this.#file,
        error: (err as Error).message,
      });
    }
  }

  /**
   * Calls `listener` whenever the cloud may look different as a whole: a new token is in use, or the
   * API accepts the token again after rejecting it (work that failed meanwhile is worth doing now).
   */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (err) {
        this.#log.warning("a listener for token changes failed: {error}", { error: (err as Error).message });
      }
    }
  }

  /** The tokens this process has used, the current one first (keys of the record seal). */
  tokens(): string[] {
    return this.#used;
  }

  #use(token: string): void {
    this.#token = token;
    this.#used.unshift(token);
    this.#refused = undefined;
    this.#log.info("read a new token from {file}", { file: this.#file });
    this.#changed();
  }

  #refuse(token: string, why: string): void {
    this.#refused = { token, why, since: new Date().toISOString() };
    this.#log.error("the new token in {file} is not used: {why}; keeping the current token", {
      file: this.#file,
      why,
    });
  }
}
