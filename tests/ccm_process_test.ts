/**
 * The status port a test hands a CCM lies below the kernel's ephemeral range, where no client
 * socket of a parallel run can take it before the CCM binds it (CI once saw a conformance case's CCM
 * exit 2 at its start, a configuration error, while its status port came from `port: 0`).
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { spawnCcm } from "../testing/ccm_process.ts";

Deno.test("ccm process: the status port a test hands a CCM comes from below the ephemeral range", async () => {
  const range = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(/\s+/);
  const ephemeralLow = Number(range[0]);
  const p = spawnCcm(["--help"], {});
  const status = await p.status;
  assertEquals(status.code, 0, p.output());
  assert(
    p.port < ephemeralLow,
    `port ${p.port} lies in the ephemeral range ${range.join("–")}: another socket may take it first`,
  );
});
