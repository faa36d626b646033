/**
 * The two contracts meant for outsiders are documented completely and their examples run:
 * `deno doc --lint` finds nothing in this repository for `providers/provider.ts` and
 * `kube/client.ts`. What it still reports for the provider contract lies inside the
 * `kubernetes-types` package (its Node and Service members refer to types it does not re-export at
 * our entry point: Deno's `private-type-ref` for another package's types, denoland/deno#27364,
 * still fires for npm packages).
 */
import { assert, assertEquals } from "../testing/assert.ts";

async function deno(...args: string[]): Promise<{ success: boolean; text: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  // deno-lint-ignore no-control-regex
  return { success: out.success, text: text.replace(/\x1b\[[0-9;]*m/g, "") };
}

for (const contract of ["providers/provider.ts", "kube/client.ts"]) {
  Deno.test(`contract docs: deno doc --lint reports nothing of ours in ${contract}`, async () => {
    const { text } = await deno("doc", "--lint", contract);
    const problems = text.split(/\n(?=error\[)/).filter((p) => p.startsWith("error["));
    const ours = problems.filter((p) => !(p.match(/--> (\S+)/)?.[1] ?? "").includes("/kubernetes-types/"));
    assertEquals(ours, [], "documentation problems in this repository");
    assert(
      problems.every((p) => p.startsWith("error[private-type-ref]")),
      "only another package's type references remain",
    );
  });

  Deno.test(`contract docs: the @example in ${contract} runs`, async () => {
    const { success, text } = await deno("test", "--doc", "--quiet", contract);
    assert(success && /1 passed/.test(text), text);
  });
}
