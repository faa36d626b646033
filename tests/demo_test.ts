/**
 * The README's first command converges and exits 0 with `--once`.
 */
import { assert, assertEquals } from "../testing/assert.ts";

Deno.test("demo --once converges: nodes initialized and routed, the Service has ingress", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../hack/demo.ts", import.meta.url).pathname, "--once"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assertEquals(out.code, 0, text + new TextDecoder().decode(out.stderr));
  assert(/converged after [\d.]+ s/.test(text), text);
  for (
    const expected of ["hcloud://", "cpx21", "fsn1/fsn1-dc14", "nbg1/nbg1-dc3", "routed", "10.244.2.0/24"]
  ) {
    assert(text.includes(expected), `missing ${expected} in the demo table`);
  }
});
