/**
 * One health check of the simulator's data path, as a Hetzner balancer makes it: `tcp` opens a
 * connection; `http` sends `GET <path>` with the configured `Host` (domain) and compares the answer's
 * status with the configured codes (`2??` and `3??` by default), over TLS when `http.tls` is set.
 * Over TLS the target's certificate is not verified (a balancer checks that the target answers, not
 * who it is), and the domain is also sent as SNI.
 *
 * @module
 */
import net from "node:net";
import tls from "node:tls";
import type { LoadBalancer } from "./world.ts";

/** A balancer service's health check, as the API stores it. */
export type HealthCheck = LoadBalancer["services"][number]["health_check"];

/** Whether `code` (e.g. 204) is among `patterns` (`"2??"`, `"404"`). */
export function statusMatches(code: number, patterns: string[] | undefined): boolean {
  const list = patterns?.length ? patterns : ["2??", "3??"];
  return list.some((p) => new RegExp(`^${p.replaceAll("?", "[0-9]")}$`).test(String(code)));
}

/** One check of the target at `address`: true passed, false failed (refused, timed out, wrong code). */
export async function probe(address: string, hc: HealthCheck): Promise<boolean> {
  const timeoutMs = (hc.timeout ?? 10) * 1000;
  try {
    if (hc.protocol === "tcp") {
      const conn = await withTimeout(Deno.connect({ hostname: address, port: hc.port }), timeoutMs);
      conn.close();
      return true;
    }
    const status = await httpStatus(address, hc, timeoutMs);
    return statusMatches(status, hc.http?.status_codes);
  } catch {
    return false;
  }
}

/**
 * The status code of `GET <path>` over plain TCP or TLS within `timeoutMs` (of silence); the socket
 * is closed once the status line is read. Written out by hand, since `fetch` neither lets the Host header be set nor skips
 * certificate checks.
 */
function httpStatus(address: string, hc: HealthCheck, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const domain = hc.http?.domain || undefined;
    const request = () =>
      socket.write(
        `GET ${hc.http?.path ?? "/"} HTTP/1.1\r\nHost: ${domain ?? address}\r\nConnection: close\r\n\r\n`,
      );
    const socket = hc.http?.tls
      ? tls.connect({ host: address, port: hc.port, rejectUnauthorized: false, servername: domain }, request)
      : net.connect({ host: address, port: hc.port }, request);
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error("timeout"));
    });
    let head = "";
    socket.on("data", (chunk: Uint8Array | string) => {
      head += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
      if (!head.includes("\r\n") && head.length < 1024) return;
      socket.destroy();
      const line = head.split("\r\n", 1)[0];
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(line);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`not an HTTP answer: ${line.slice(0, 40)}`));
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error("closed before an answer")));
  });
}

/** `p`, or a rejection after `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => timer = setTimeout(() => reject(new Error("timeout")), ms)),
  ]);
}
