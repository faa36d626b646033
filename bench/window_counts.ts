/**
 * Counting a benchmark window's cloud requests (the steady-state benchmark's arithmetic, unit-tested
 * without a cluster).
 *
 * @module
 */

/**
 * The window's requests per endpoint, each full server list counted whole at its first page: a 100-page
 * list takes about 25 s, and one that straddles an edge of the window would otherwise count in part
 * (or one started before it count in part too).
 */
export function windowCounts(
  audit: { time: number; route: string; query: string }[],
  start: number,
  end: number,
  listPages: number,
): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of audit) {
    if (e.time < start || e.time >= end) continue;
    if (e.route === "GET /servers") {
      const page = Number(new URLSearchParams(e.query).get("page") ?? 1);
      if (page === 1) counts[e.route] = (counts[e.route] ?? 0) + listPages;
      continue;
    }
    counts[e.route] = (counts[e.route] ?? 0) + 1;
  }
  return counts;
}
