/**
 * The data path's health checks against real listeners: tcp, http with path, Host and status codes,
 * and http over TLS (a self-signed certificate passes: balancers do not verify their targets).
 */
import { assertEquals } from "../testing/assert.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY } from "../tests/fixtures/example_com.ts";
import { type HealthCheck, probe, statusMatches } from "./health_probe.ts";

const ADDRESS = "127.0.0.1";

/** An HTTP server answering 204 on /healthz when Host (or SNI) is right, 503 otherwise. */
function serve(tlsOn: boolean) {
  const seen: { host: string | null; path: string }[] = [];
  const handler = (req: Request) => {
    const url = new URL(req.url);
    seen.push({ host: req.headers.get("host"), path: url.pathname });
    const ok = url.pathname === "/healthz" && req.headers.get("host") === "app.example.com";
    return new Response(null, { status: ok ? 204 : 503 });
  };
  const server = Deno.serve({
    hostname: ADDRESS,
    port: 0,
    onListen: () => {},
    ...(tlsOn ? { cert: EXAMPLE_CERT, key: EXAMPLE_KEY } : {}),
  }, handler);
  return { seen, port: server.addr.port, close: () => server.shutdown() };
}

const http = (port: number, tls: boolean, path: string, domain: string, codes?: string[]): HealthCheck => ({
  protocol: "http",
  port,
  interval: 1,
  timeout: 2,
  retries: 0,
  http: { path, domain, tls, status_codes: codes },
} as HealthCheck);

for (const tls of [false, true]) {
  Deno.test(`sim health check: http${tls ? " over TLS" : ""} with path, Host and status codes`, async () => {
    const server = serve(tls);
    try {
      assertEquals(await probe(ADDRESS, http(server.port, tls, "/healthz", "app.example.com")), true);
      // Wrong path or Host: 503, not among the default 2??/3??.
      assertEquals(await probe(ADDRESS, http(server.port, tls, "/", "app.example.com")), false);
      assertEquals(await probe(ADDRESS, http(server.port, tls, "/healthz", "other.example.com")), false);
      // Codes as configured: 503 accepted when listed, 204 refused when not.
      assertEquals(await probe(ADDRESS, http(server.port, tls, "/", "app.example.com", ["5??"])), true);
      assertEquals(
        await probe(ADDRESS, http(server.port, tls, "/healthz", "app.example.com", ["200"])),
        false,
      );
      assertEquals(server.seen[0], { host: "app.example.com", path: "/healthz" });
    } finally {
      await server.close();
    }
  });
}

Deno.test("sim health check: TLS against a plain listener, plain against a TLS one, and nothing listening fail", async () => {
  const plain = serve(false);
  const secure = serve(true);
  try {
    assertEquals(await probe(ADDRESS, http(plain.port, true, "/healthz", "app.example.com")), false);
    assertEquals(await probe(ADDRESS, http(secure.port, false, "/healthz", "app.example.com")), false);
  } finally {
    await plain.close();
    await secure.close();
  }
  // The ports are closed now: refused.
  assertEquals(await probe(ADDRESS, http(plain.port, true, "/healthz", "app.example.com")), false);
  assertEquals(
    await probe(ADDRESS, { protocol: "tcp", port: plain.port, timeout: 1 } as HealthCheck),
    false,
  );
});

Deno.test("sim health check: tcp passes on a listening port", async () => {
  const listener = Deno.listen({ hostname: ADDRESS, port: 0 });
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    assertEquals(await probe(ADDRESS, { protocol: "tcp", port, timeout: 1 } as HealthCheck), true);
  } finally {
    listener.close();
  }
});

Deno.test("sim health check: status patterns", () => {
  assertEquals(statusMatches(204, undefined), true);
  assertEquals(statusMatches(302, []), true);
  assertEquals(statusMatches(404, undefined), false);
  assertEquals(statusMatches(404, ["4?4"]), true);
  assertEquals(statusMatches(200, ["201", "3??"]), false);
});

Deno.test("sim health check: a target that accepts but never answers fails after the timeout", async () => {
  const listener = Deno.listen({ hostname: ADDRESS, port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })().catch(() => {});
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    assertEquals(await probe(ADDRESS, http(port, false, "/healthz", "app.example.com")), false);
  } finally {
    listener.close();
    for (const conn of held) conn.close();
    await accepting;
  }
});
