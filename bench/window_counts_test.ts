import { assertEquals } from "../testing/assert.ts";
import { windowCounts } from "./window_counts.ts";

Deno.test("steady state window: a full list counts whole where it starts, never in part", () => {
  const list = (at: number, pages: number) =>
    Array.from({ length: pages }, (_, i) => ({
      time: at + i * 250,
      route: "GET /servers",
      query: `?page=${i + 1}&per_page=50`,
    }));
  const audit = [
    ...list(-10_000, 100), // started before the window: its pages inside do not count
    { time: 100_000, route: "GET /load_balancers", query: "?page=1&per_page=7" },
    ...list(280_000, 100),
    ...list(590_000, 100), // straddles the end: counts whole
    { time: 600_000, route: "GET /load_balancers", query: "" }, // after the window
  ];
  assertEquals(windowCounts(audit, 0, 600_000, 100), { "GET /load_balancers": 1, "GET /servers": 200 });
});
