/**
 * The two contracts meant for outsiders are documented completely and their examples run:
 * `deno doc --lint` finds nothing in this repository for `providers/provider.ts` and
 * `kube/client.ts`. What it still reports for the provider contract lies inside the
 * `kubernetes-types` package (its Node and Service members refer to types it does not re-export at
 * our entry point: Deno's `private-type-ref` for another package's types, denoland/deno#27364,
 * still fires for npm packages).
 *
 * Every room's door (each `mod.ts`, found by walking the tree) passes it too, linted together with
 * the shared modules the doors show (the contracts, the flags, the kube client's informers and
 * events, metrics, conditions): a type one door shows and another door (or a shared module)
 * exports counts as public, so a door need not re-export the provider contract it implements.
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

/** The problems `deno doc --lint` reports for `entries` whose place is in this repository. */
async function ourDocProblems(...entries: string[]): Promise<string[]> {
  const { text } = await deno("doc", "--lint", ...entries);
  const root = new URL("..", import.meta.url).pathname;
  return text.split(/\n(?=error\[)/).filter((p) => p.startsWith("error["))
    .filter((p) => (p.match(/--> (\S+)/)?.[1] ?? "").startsWith(root))
    .filter((p) => !p.includes("/node_modules/"));
}

/** The shared modules the doors show; each is documented at its own entry. */
const SHARED = [
  "providers/provider.ts",
  "kube/client.ts",
  "kube/informer.ts",
  "kube/informer_factory.ts",
  "kube/events.ts",
  "config/flags.ts",
  "config/controllers_flag.ts",
  "lib/metrics.ts",
  "lib/conditions.ts",
  "lib/sleep.ts",
  "lib/clock.ts",
];

/** Every room's door in the repository (tests, tools and build output aside). */
async function doors(): Promise<string[]> {
  const root = new URL("..", import.meta.url).pathname;
  const found: string[] = [];
  const skip = new Set(["node_modules", "dist", ".tools", ".git", "tests"]);
  async function walk(dir: string) {
    for await (const entry of Deno.readDir(root + dir)) {
      if (entry.isDirectory && !skip.has(entry.name) && !entry.name.startsWith(".")) {
        await walk(`${dir}${entry.name}/`);
      } else if (entry.isFile && entry.name === "mod.ts" && dir) found.push(`${dir}mod.ts`);
    }
  }
  await walk("");
  return found.sort();
}

Deno.test("room docs: deno doc --lint reports nothing of ours at any door", async () => {
  const entries = await doors();
  // The rooms the layout names: a walk that found none of them would prove nothing.
  for (const door of ["hcloud_api/mod.ts", "controllers/mod.ts", "providers/hcloud/load_balancers/mod.ts"]) {
    assert(entries.includes(door), `door ${door} not found among ${entries.join(", ")}`);
  }
  assertEquals(await ourDocProblems(...entries, ...SHARED), [], "documentation problems in this repository");
});

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
