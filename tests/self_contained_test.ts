/**
 * A clone of the repository needs nothing beside it: no file refers to the team's shared folder or
 * to a relative path that climbs out of the repository. The one exception is the command that copies
 * new recordings of the official CCM into the repository (`conformance/golden_sync.ts`). CI runs
 * from a copy of the checkout in an empty folder (`.ci/run`), so nothing beside it can be read.
 *
 * What counts as a path: a run of `../` followed by a name, resolved against the folder of the file it
 * stands in (as `new URL(..., import.meta.url)`, a shell script's `$here/..` and a Markdown link are).
 * Absolute paths are system paths (`/usr/bin/etcd`, `/dev/shm`) or caches of built tools, not inputs.
 */
import { assertEquals } from "../testing/assert.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** Files allowed to name a path outside, and why. */
const EXCEPTIONS: Record<string, string> = {
  "conformance/golden_sync.ts": "the one command that copies new recordings in from outside",
};

/** Text files of the repository: what git tracks plus untracked files it does not ignore. */
async function repositoryFiles(): Promise<string[]> {
  const out = await new Deno.Command("git", {
    args: ["-C", REPO, "ls-files", "--cached", "--others", "--exclude-standard"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`git ls-files: ${new TextDecoder().decode(out.stderr)}`);
  const files = new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
  const existing: string[] = [];
  for (const f of files) {
    try {
      if ((await Deno.stat(`${REPO}/${f}`)).isFile) existing.push(f); // deleted but not yet staged
    } catch { /* gone */ }
  }
  return existing;
}

/** The places in `text` (of the file at `file`) that name a path outside the repository. */
export function outsideReferences(file: string, text: string): string[] {
  const found: string[] = [];
  if (/(^|[^\w.])\.\.\/shared\b|\bshared\/(hccm-golden|hcloud-api|reference)\b/.test(text)) {
    for (const line of text.split("\n")) {
      if (/(^|[^\w.])\.\.\/shared\b|\bshared\/(hccm-golden|hcloud-api|reference)\b/.test(line)) {
        found.push(line.trim());
      }
    }
  }
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")).split("/") : [];
  for (const m of text.matchAll(/(?<![\w.])((?:\.\.\/)+)([\w@-][\w.@-]*)/g)) {
    const ups = m[1].length / 3;
    if (ups > dir.length) found.push(m[0]);
  }
  return [...new Set(found)];
}

Deno.test("no file of the repository refers to a path outside it", async () => {
  const offenders: string[] = [];
  for (const file of await repositoryFiles()) {
    if (file in EXCEPTIONS) continue;
    const bytes = await Deno.readFile(`${REPO}/${file}`);
    if (bytes.includes(0)) continue; // binary
    for (const ref of outsideReferences(file, new TextDecoder().decode(bytes))) {
      offenders.push(`${file}: ${ref.slice(0, 160)}`);
    }
  }
  assertEquals(offenders, [], "these files refer to a path outside the repository");
});

Deno.test("outsideReferences finds climbing paths and the shared folder, not paths that stay inside", () => {
  // Built from pieces, so that this file does not name them itself.
  const up = "../";
  const shared = `${up}shared`;
  const found = (file: string, text: string) => outsideReferences(file, text).length > 0;
  assertEquals(found("tests/a_test.ts", `new URL("${up}${shared}/x.json", import.meta.url)`), true);
  assertEquals(found("README.md", `see ${shared}/reference/x.md`), true);
  assertEquals(found("hack/x.sh", `cat "$here/${up}${up}${up}etc/passwd"`), true);
  assertEquals(found("tests/a_test.ts", `new URL("${up}hcloud_api/openapi.json", import.meta.url)`), false);
  assertEquals(found("hack/kube_assets/build.sh", `cd "$here/${up}${up}testing"`), false);
  assertEquals(found("README.md", "the golden cases in `conformance/hccm_golden/`"), false);
});
