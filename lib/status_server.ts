/**
 * The health and metrics server: `/healthz`, `/readyz` and `/metrics`, nothing else.
 *
 * @module
 */
import type { Registry } from "./metrics.ts";

/** A named check; returns `undefined` when fine, else the reason it fails. */
export interface StatusCheck {
  name: string;
  check(): string | undefined;
}

/** Settings of {@link serveStatus}. */
export interface StatusServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  registry: Registry;
  health: StatusCheck[];
  ready: StatusCheck[];
  /** PEM certificate and key for HTTPS; plain HTTP without. */
  tls?: { cert: string; key: string };
  signal?: AbortSignal;
  onListen?: (addr: Deno.NetAddr) => void;
}

/** Builds the request handler (exported for tests that do not need a socket). */
export function statusHandler(
  options: Pick<StatusServerOptions, "registry" | "health" | "ready">,
): Deno.ServeHandler {
  const run = (checks: StatusCheck[], verbose: boolean) => {
    const failures: string[] = [];
    const lines: string[] = [];
    for (const c of checks) {
      let reason: string | undefined;
      try {
        reason = c.check();
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
      if (reason !== undefined) failures.push(`[-]${c.name} failed: ${reason}`);
      lines.push(reason === undefined ? `[+]${c.name} ok` : `[-]${c.name} failed: ${reason}`);
    }
    const ok = failures.length === 0;
    const body = verbose || !ok ? `${lines.join("\n")}\n${ok ? "ok" : "not ok"}\n` : "ok";
    return new Response(body, {
      status: ok ? 200 : 503,
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  };
  return (request) => {
    const url = new URL(request.url);
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response("method not allowed\n", { status: 405 });
    }
    const verbose = url.searchParams.has("verbose");
    switch (url.pathname) {
      case "/healthz":
      case "/livez":
        return run(options.health, verbose);
      case "/readyz":
        return run(options.ready, verbose);
      case "/metrics":
        return new Response(options.registry.render(), {
          headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
        });
      default:
        return new Response("not found\n", { status: 404 });
    }
  };
}

/** Starts the server; it stops when `signal` aborts. */
export function serveStatus(options: StatusServerOptions): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({
    hostname: options.hostname,
    port: options.port,
    signal: options.signal,
    ...(options.tls ?? {}),
    onListen: (addr) => options.onListen?.(addr),
  }, statusHandler(options));
}
