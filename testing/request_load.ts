/**
 * Requests at a steady rate, each on its own connection, counted as they end: the load the data-path
 * proofs (draining, the firewall) keep up while the cluster changes under it.
 *
 * @module
 */

/** What a load saw. */
export interface LoadResult {
  requests: number;
  failed: number;
}

/** A running load; `stop` (any number of times) waits for the requests in flight and returns what they saw. */
export interface RequestLoad {
  /** The figures so far. */
  readonly result: LoadResult;
  stop(): Promise<LoadResult>;
}

/**
 * Sends GET `url` `ratePerSecond` times a second until stopped; a request fails when it errs, times
 * out (10 s), answers non-2xx, or its body does not start with `expect`.
 */
export function startLoad(url: string, ratePerSecond: number, expect: string): RequestLoad {
  const http = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const result: LoadResult = { requests: 0, failed: 0 };
  let loading = true;
  const running = (async () => {
    const inFlight = new Set<Promise<void>>();
    while (loading) {
      const request = (async () => {
        result.requests++;
        try {
          const res = await fetch(url, { client: http, signal: AbortSignal.timeout(10_000) });
          const text = await res.text();
          if (!res.ok || !text.startsWith(expect)) result.failed++;
        } catch {
          result.failed++;
        }
      })();
      inFlight.add(request);
      request.finally(() => inFlight.delete(request));
      await new Promise((r) => setTimeout(r, 1000 / ratePerSecond));
    }
    await Promise.all(inFlight);
  })();
  let stopped: Promise<LoadResult> | undefined;
  return {
    result,
    stop() {
      loading = false;
      stopped ??= running.catch(() => {}).then(() => {
        http.close();
        return { ...result };
      });
      return stopped;
    },
  };
}
