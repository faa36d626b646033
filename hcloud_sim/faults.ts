/**
 * The simulator's fault knobs and audit record: types of their own, named by the simulator, its
 * control routes and its control object alike (none of which then imports another for them).
 *
 * @module
 */

/** A fault rule: requests whose `METHOD /path` matches `match` (a regex) fail. */
export interface FaultRule {
  match: string;
  /** Probability per matching request (default 1). */
  rate?: number;
  status: number;
  code: string;
  message?: string;
  /** Answer with an HTML page instead of the JSON envelope (a proxy's 502). */
  html?: boolean;
  /** Stop after this many injected failures. */
  count?: number;
  /** Let this many matching requests through first (the Nth write of a route, for a sweep). */
  skip?: number;
  /** Stop at this time (ms since epoch). */
  untilMs?: number;
  /**
   * Carry the request out, then answer with the fault instead of its result: the response was lost
   * (a proxy's timeout after the API applied it). The client cannot tell it from a request never made.
   */
  applied?: boolean;
}

/** Fault knobs, settable through `PUT /_sim/faults`. */
export interface Faults {
  rules: FaultRule[];
  /** Latency added to every `/v1` request. */
  latencyMs: number;
  /** Occasional extra latency. */
  latencySpike?: { rate: number; ms: number };
  /** The next N `/v1` requests answer 429. */
  rateLimitBurst: number;
}

/** One audited `/v1` request. */
export interface AuditEntry {
  time: number;
  method: string;
  path: string;
  query: string;
  /** The matched route, e.g. `GET /servers/{id}`. */
  route: string;
  status: number;
  userAgent: string;
}
