import { assertEquals } from "../testing/assert.ts";
import { describeNetworkError } from "./network_error.ts";

/** A failed fetch to `url`, as Deno reports it (TypeError "fetch failed", the reason in its cause). */
async function failedFetch(url: string, timeoutMs = 2_000): Promise<unknown> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    return err;
  }
  throw new Error(`${url} answered`);
}

Deno.test("network errors: refused and timeout are named, with the client's own detail", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const refused = describeNetworkError(await failedFetch(`http://127.0.0.1:${port}/v1/locations`));
  assertEquals(
    refused.startsWith("connection refused (tcp connect error: Connection refused"),
    true,
    refused,
  );

  // A server that accepts and never answers (a TLS handshake that never completes).
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  const timedOut = describeNetworkError(
    await failedFetch(`https://127.0.0.1:${(silent.addr as Deno.NetAddr).port}/`, 300),
  );
  assertEquals(timedOut.startsWith("timed out"), true, timedOut);
  silent.close();
  for (const conn of held) conn.close();
});

Deno.test("network errors: DNS and TLS failures as Deno's fetch reports them, and an unknown one", () => {
  // Constructed (a real lookup depends on the machine's resolver): the text Deno 2.9 gives.
  const dns = new TypeError("fetch failed", {
    cause: new Error(
      "error sending request for url (http://api.example.invalid/v1): client error (Connect): dns error: " +
        "failed to lookup address information: Name or service not known",
    ),
  });
  assertEquals(
    describeNetworkError(dns),
    "DNS lookup failed (dns error: failed to lookup address information: Name or service not known)",
  );
  const tls = new TypeError("fetch failed", {
    cause: new Error(
      "error sending request for url (https://10.0.0.1/): client error (Connect): invalid peer certificate: UnknownIssuer",
    ),
  });
  assertEquals(describeNetworkError(tls), "TLS failed (invalid peer certificate: UnknownIssuer)");
  assertEquals(describeNetworkError(new Error("something else")), "something else");
});
