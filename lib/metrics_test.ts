import { assertEquals, assertMatch } from "../testing/assert.ts";
import { Registry } from "./metrics.ts";

Deno.test("metrics: counters, gauges and histograms render in the Prometheus text format", () => {
  const r = new Registry();
  const c = r.counter("requests_total", "Requests.");
  c.inc({ code: "200", path: 'a"b' });
  c.inc({ path: 'a"b', code: "200" }, 2);
  assertEquals(c.get({ code: "200", path: 'a"b' }), 3);
  assertEquals(r.counter("requests_total", "again"), c);
  r.gauge("depth", "Depth.").set({ name: "q" }, 4);
  const h = r.histogram("latency_seconds", "Latency.", [0.1, 1]);
  h.observe({}, 0.05);
  h.observe({}, 5);
  const text = r.render();
  assertMatch(text, /# TYPE requests_total counter\nrequests_total\{code="200",path="a\\"b"\} 3\n/);
  assertMatch(text, /depth\{name="q"\} 4/);
  assertMatch(
    text,
    /latency_seconds_bucket\{le="0.1"\} 1\nlatency_seconds_bucket\{le="1"\} 1\nlatency_seconds_bucket\{le="\+Inf"\} 2/,
  );
  assertMatch(text, /latency_seconds_sum 5.05\nlatency_seconds_count 2/);
});
