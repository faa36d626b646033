/**
 * The provider contract's documentation is complete: `deno doc --lint providers/provider.ts` finds
 * nothing in this repository. What it still reports lies inside the `kubernetes-types` package (its
 * Node and Service members refer to types that package does not re-export at our entry point: Deno's
 * `private-type-ref` for another package's types, denoland/deno#27364, still fires for npm packages).
 */
import { assert, assertEquals } from "../testing/assert.ts";

Deno.test("provider contract: deno doc --lint reports nothing of ours", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", "providers/provider.ts"],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  // deno-lint-ignore no-control-regex
  const text = new TextDecoder().decode(out.stderr).replace(/\x1b\[[0-9;]*m/g, "");
  const problems = text.split(/\n(?=error\[)/).filter((p) => p.startsWith("error["));
  const ours = problems.filter((p) => {
    const at = p.match(/--> (\S+)/)?.[1] ?? "";
    return !at.includes("/kubernetes-types/");
  });
  assertEquals(ours, [], "documentation problems in this repository");
  assert(
    problems.every((p) => p.startsWith("error[private-type-ref]")),
    "only another package's type references remain",
  );
});
