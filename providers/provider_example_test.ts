/** The contract's `@example` (a provider from a fixed list of machines) compiles and runs. */
import { assert } from "../testing/assert.ts";

Deno.test("provider contract: the @example in provider.ts runs", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["test", "--doc", "--quiet", new URL("./provider.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert(out.success && /1 passed/.test(text), text);
});
