/**
 * One cached Robot server list serves every Robot Node: lookups by number and by name, for
 * initialization, address refresh, load balancer targets and existence checks. Concurrent callers
 * share one request; the list is read again after `ROBOT_CACHE_TIMEOUT`, or when a caller needs a
 * list taken after a given time (a Node newer than the list, a deletion to confirm).
 *
 * @module
 */
import type { RobotClient, RobotServerInfo } from "./client.ts";

/** A server list as of `at`. */
export interface RobotSnapshot {
  /** When the list was read (ms since epoch). */
  at: number;
  /** The servers by number. */
  byNumber: Map<number, RobotServerInfo>;
  /** The servers by name. */
  byName: Map<string, RobotServerInfo>;
}

/** The shortest time between two lists read to confirm a missing server (Robot allows 200 an hour). */
const CONFIRM_MIN_INTERVAL_MS = 60_000;

/** See the module doc. */
export class RobotServers {
  /** The client the lists are read with. */
  readonly client: RobotClient;
  readonly #timeoutMs: number;
  #snapshot?: RobotSnapshot;
  #inFlight?: Promise<RobotSnapshot>;

  /** One list (read with `client`) serves every lookup for `cacheTimeoutMs`. */
  constructor(client: RobotClient, cacheTimeoutMs: number) {
    this.client = client;
    this.#timeoutMs = cacheTimeoutMs;
  }

  /** A list no older than the cache timeout and taken at or after `notBefore`. */
  async get(notBefore = 0): Promise<RobotSnapshot> {
    const s = this.#snapshot;
    if (s && s.at >= notBefore && Date.now() - s.at < this.#timeoutMs) return s;
    return await this.#read();
  }

  /**
   * True only when a list read now (at most one a minute) lacks the server: a Node is deleted on
   * this answer, so a list from before the question, or an error, never decides it.
   */
  async confirmedMissing(number: number): Promise<boolean> {
    const asked = Date.now();
    const cached = this.#snapshot;
    const snapshot = cached && asked - cached.at < CONFIRM_MIN_INTERVAL_MS ? cached : await this.#read();
    return !snapshot.byNumber.has(number);
  }

  #read(): Promise<RobotSnapshot> {
    this.#inFlight ??= (async () => {
      try {
        const at = Date.now();
        const servers = await this.client.servers();
        const snapshot: RobotSnapshot = {
          at,
          byNumber: new Map(servers.map((s) => [s.number, s])),
          byName: new Map(servers.map((s) => [s.name, s])),
        };
        this.#snapshot = snapshot;
        return snapshot;
      } finally {
        this.#inFlight = undefined;
      }
    })();
    return this.#inFlight;
  }
}
