import { assert, assertEquals } from "../testing/assert.ts";
import { parseSimArgs, SIM_USAGE } from "./main.ts";

Deno.test("sim command line: --help prints usage (exit 0); an unknown option names itself with usage (exit 2)", () => {
  assertEquals(parseSimArgs(["--help"]), { usage: SIM_USAGE, code: 0 });
  assertEquals(parseSimArgs(["-h"]), { usage: SIM_USAGE, code: 0 });
  const bad = parseSimArgs(["--bogus"]);
  assert(
    "usage" in bad && bad.code === 2 && bad.usage.startsWith("sim: Unknown option '--bogus'"),
    String(bad),
  );
  const ok = parseSimArgs(["--port", "9000"]);
  assert("values" in ok);
  assertEquals([ok.values.port, ok.values.hostname, ok.values["action-duration"]], [
    "9000",
    "127.0.0.1",
    "1s",
  ]);
  // Every option of the parser is in the usage text.
  for (const option of ["--port", "--hostname", "--seed", "--action-duration", "--latency", "--token"]) {
    assert(SIM_USAGE.includes(option), option);
  }
});
