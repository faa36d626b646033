/**
 * Simulated `GET /load_balancers/{id}/metrics`: the series of the asked types from `start` to `end`
 * at `step` seconds (at most 500 samples, as the API caps them), each sample the balancer's current
 * value from `world.lbTraffic` (zeros when a test set none). Values are strings, as the API sends them.
 *
 * @module
 */
import { faults } from "./http_kit.ts";
import { byId, route, type SimRoute } from "./router.ts";
import type { LbMetricSeries } from "./world.ts";

const SERIES: Record<string, LbMetricSeries[]> = {
  open_connections: ["open_connections"],
  connections_per_second: ["connections_per_second"],
  requests_per_second: ["requests_per_second"],
  bandwidth: ["bandwidth.in", "bandwidth.out"],
};

/** The metrics route of load balancers. */
export function loadBalancerMetricsRoutes(): SimRoute[] {
  return [
    route("GET", "/load_balancers/{id}/metrics", (req, p, { world }) => {
      const lb = byId(world.loadBalancers, p.id, "load_balancer");
      const types = req.query.getAll("type").flatMap((t) => t.split(",")).filter(Boolean);
      const unknown = types.find((t) => !(t in SERIES));
      if (!types.length || unknown !== undefined) {
        throw faults.invalid({ type: [`must be one of ${Object.keys(SERIES).join(", ")}`] });
      }
      const start = Date.parse(req.query.get("start") ?? "");
      const end = Date.parse(req.query.get("end") ?? "");
      if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) {
        throw faults.invalid({ start: ["start and end must be RFC 3339 times, start before end"] });
      }
      const span = Math.max(1, Math.round((end - start) / 1000));
      let step = Number(req.query.get("step") ?? "") || Math.max(1, Math.ceil(span / 200));
      if (span / step > 500) step = Math.ceil(span / 500);
      const traffic = world.lbTraffic.get(lb.id) ?? {};
      const time_series: Record<string, { values: [number, string][] }> = {};
      for (const name of types.flatMap((t) => SERIES[t])) {
        const values: [number, string][] = [];
        for (let at = start / 1000; at <= end / 1000; at += step) {
          values.push([at, String(traffic[name] ?? 0)]);
        }
        time_series[name] = { values };
      }
      return {
        status: 200,
        body: {
          metrics: {
            start: new Date(start).toISOString().replace(/\.\d{3}Z$/, "Z"),
            end: new Date(end).toISOString().replace(/\.\d{3}Z$/, "Z"),
            step,
            time_series,
          },
        },
      };
    }),
  ];
}
