/**
 * The two contracts meant for outsiders are documented completely and their examples run:
 * `deno doc --lint` finds nothing in this repository for `providers/provider.ts` and
 * `kube/client.ts`. What it still reports for the provider contract lies inside the
 * `kubernetes-types` package (its Node and Service members refer to types it does not re-export at
 * our entry point: Deno's `private-type-ref` for another package's types, denoland/deno#27364,
 * still fires for npm packages).
 *
 * The doors of the rooms that stand alone pass it too (the API room, Robot, the firewall, the
 * admission policy): each exports every type it shows. A door that shows the provider contract or
 * the provider's shared context (the controllers', the load balancers', instances, routes, servers)
 * would have to re-export those whole, so it is not held to it (counted in the closing note).
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

/** The problems `deno doc --lint` reports for `entry` whose place is in this repository. */
async function ourDocProblems(entry: string): Promise<string[]> {
  const { text } = await deno("doc", "--lint", entry);
  const root = new URL("..", import.meta.url).pathname;
  return text.split(/\n(?=error\[)/).filter((p) => p.startsWith("error["))
    .filter((p) => (p.match(/--> (\S+)/)?.[1] ?? "").startsWith(root))
    .filter((p) => !p.includes("/node_modules/"));
}

for (
  const door of [
    "hcloud_api/mod.ts",
    "providers/hcloud/robot/mod.ts",
    "providers/hcloud/firewall/mod.ts",
    "providers/hcloud/load_balancers/spec/admission/mod.ts",
  ]
) {
  Deno.test(`room docs: deno doc --lint reports nothing of ours at the door ${door}`, async () => {
    assertEquals(await ourDocProblems(door), [], "documentation problems in this repository");
  });
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
