/**
 * Balancer traffic as metrics (opt-in, `HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS=true`): after each drift
 * repair list, `GET /load_balancers/{id}/metrics` for this cluster's balancers — open connections,
 * new connections and requests per second, bandwidth in and out, the last minute's sample — exported as
 * gauges. Each balancer costs one request per drift pass, so the pass asks for at most
 * {@link TRAFFIC_BALANCERS_PER_PASS} balancers and takes the rest in turn at the next passes: at the
 * default 10-minute drift period that is at most 180 requests an hour (5 % of the project's 3 600),
 * whatever the number of balancers. A failed read leaves that balancer's last figures and is retried at
 * the next pass; it never fails the drift repair.
 *
 * @module
 */
import type { HcloudClient } from "../../../../hcloud_api/mod.ts";
import type { Registry } from "../../../../lib/metrics.ts";
import { logger } from "../../../../lib/log.ts";

/** The most balancers one drift pass reads the traffic of. */
export const TRAFFIC_BALANCERS_PER_PASS = 30;

/** The API's time series this exports. */
type Series =
  | "open_connections"
  | "connections_per_second"
  | "requests_per_second"
  | "bandwidth.in"
  | "bandwidth.out";
const SERIES: readonly Series[] = [
  "open_connections",
  "connections_per_second",
  "requests_per_second",
  "bandwidth.in",
  "bandwidth.out",
];

/** Reads and exports the traffic of this cluster's balancers, a bounded share per pass. */
export class BalancerTraffic {
  readonly #client: HcloudClient;
  readonly #now: () => number;
  readonly #gauges: Record<Series, ReturnType<Registry["gauge"]>>;
  readonly #log = logger("lb-traffic");
  /** Where the next pass starts in the list of balancer IDs (the turn). */
  #next = 0;
  /** The last figures read, by balancer name and series (kept between turns). */
  readonly #last = new Map<string, Map<Series, number>>();

  /** Reads through `client`, exports into `registry`, and asks for the minutes before `now`. */
  constructor(client: HcloudClient, registry: Registry, now: () => number) {
    this.#client = client;
    this.#now = now;
    // Written out one by one, so the metrics reference (hack/reference_pages.ts) finds each.
    this.#gauges = {
      open_connections: registry.gauge(
        "hcloud_load_balancer_open_connections",
        "Open connections of the balancer (opt-in: HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS).",
      ),
      connections_per_second: registry.gauge(
        "hcloud_load_balancer_connections_per_second",
        "New connections per second to the balancer (opt-in).",
      ),
      requests_per_second: registry.gauge(
        "hcloud_load_balancer_requests_per_second",
        "HTTP requests per second through the balancer (opt-in).",
      ),
      "bandwidth.in": registry.gauge(
        "hcloud_load_balancer_bandwidth_in_bytes_per_second",
        "Ingress bandwidth of the balancer, bytes per second (opt-in).",
      ),
      "bandwidth.out": registry.gauge(
        "hcloud_load_balancer_bandwidth_out_bytes_per_second",
        "Egress bandwidth of the balancer, bytes per second (opt-in).",
      ),
    };
  }

  /** One pass over `balancers` (this cluster's, as the drift list found them). */
  async pass(balancers: { id: number; name: string }[], signal?: AbortSignal): Promise<void> {
    const live = new Set(balancers.map((b) => b.name));
    for (const name of [...this.#last.keys()]) if (!live.has(name)) this.#last.delete(name);
    try {
      await this.#read(balancers, signal);
    } finally {
      for (const gauge of Object.values(this.#gauges)) gauge.clear();
      for (const [name, values] of this.#last) {
        for (const [series, value] of values) this.#gauges[series].set({ load_balancer: name }, value);
      }
    }
  }

  async #read(balancers: { id: number; name: string }[], signal?: AbortSignal): Promise<void> {
    if (!balancers.length) return;
    const sorted = [...balancers].sort((a, b) => a.id - b.id);
    const count = Math.min(TRAFFIC_BALANCERS_PER_PASS, sorted.length);
    const start = this.#next % sorted.length;
    this.#next = start + count;
    const end = new Date(this.#now());
    const begin = new Date(end.getTime() - 5 * 60_000);
    for (let i = 0; i < count; i++) {
      if (signal?.aborted) return;
      const lb = sorted[(start + i) % sorted.length];
      try {
        const { metrics } = await this.#client.call(
          "get load balancer metrics",
          this.#client.api.GET("/load_balancers/{id}/metrics", {
            params: {
              path: { id: lb.id },
              query: {
                type: ["open_connections", "connections_per_second", "requests_per_second", "bandwidth"],
                start: begin.toISOString(),
                end: end.toISOString(),
                step: "60",
              },
            },
            signal,
          }),
        );
        const values = this.#last.get(lb.name) ?? new Map();
        for (const [series, data] of Object.entries(metrics.time_series ?? {})) {
          const last = data.values?.at(-1)?.[1];
          const value = Number(last);
          if (SERIES.includes(series as Series) && last !== undefined && Number.isFinite(value)) {
            values.set(series as Series, value);
          }
        }
        this.#last.set(lb.name, values);
      } catch (err) {
        if (signal?.aborted) return;
        this.#log.debug("traffic of {name} not read: {error}", {
          name: lb.name,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }
}
