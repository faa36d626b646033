/**
 * The layering as an executable rule (issue 27): reads every import of the repository's own modules
 * and fails on one that runs upward or across a room's door. Tests beside the code (`*_test.ts`) may
 * use `testing/`; the door rule holds for them too.
 *
 * - `lib/` is the ground floor: it imports nothing of ours.
 * - `kube/` and `hcloud_api/` stand on `lib/` only; `config/` on `lib/`.
 * - `hcloud_sim/` uses `hcloud_api/` and `lib/`, never the provider or the controllers.
 * - `controllers/` know the provider contract (`providers/*.ts`), never a provider's room; no generic
 *   code (controllers, `kube/`, the contract) imports a cloud's API room (its errors included).
 * - A folder with a `mod.ts` is a room: from outside, only its `mod.ts` is imported.
 * - No circles: no file reaches itself through imports (type imports and re-exports included).
 * - A sub-room of `providers/hcloud/load_balancers/` never imports a file at that room's top level.
 * - Controllers name no provider's setting (`HCLOUD_*`, `ROBOT_*`): a provider says why a part is off.
 * - Two tiers of tests: `tests/` runs real components (kube-apiserver, kubelets, helm, the CCM as a
 *   process); a `*_test.ts` anywhere else is in `deno task test:unit` and imports none of the helpers
 *   that start them.
 */
import { assertEquals } from "./testing/assert.ts";

const ROOT = new URL(".", import.meta.url);
const SKIP_DIRS = new Set([".git", "node_modules", "hccm_golden", "dist", ".tools"]);
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^"';]*?from\s*["'](\.{1,2}\/[^"']+)["']|import\s*\(\s*["'](\.{1,2}\/[^"']+)["']/g;

/** Every `.ts` file of ours, by path relative to the root. */
function sources(dir = ""): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(new URL(dir || ".", ROOT))) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory && !SKIP_DIRS.has(entry.name)) out.push(...sources(path));
    else if (entry.isFile && entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** A repository path with its `.` and `..` segments resolved. */
function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

function importsOf(file: string): string[] {
  const text = Deno.readTextFileSync(new URL(file, ROOT));
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
  return [...text.matchAll(IMPORT)].map((m) => normalize(`${dir}/${m[1] ?? m[2]}`));
}

/** What each layer may import of ours, besides itself (non-test files). */
const ALLOWED: [RegExp, string[]][] = [
  [/^lib\//, ["lib/"]],
  [/^kube\//, ["kube/", "lib/"]],
  [/^hcloud_api\//, ["hcloud_api/", "lib/"]],
  [/^config\//, ["config/", "lib/"]],
  [/^hcloud_sim\//, ["hcloud_sim/", "hcloud_api/", "lib/"]],
];
const FORBIDDEN: [RegExp, RegExp, string][] = [
  [/^controllers\//, /^providers\/[^/]+\//, "controllers know the provider contract, not a provider's room"],
  [
    /^providers\/[^/]+\.ts$/,
    /^controllers\//,
    "the provider contract does not reach back into the controllers",
  ],
  [/^providers\/hcloud\//, /^controllers\//, "the provider does not reach into the controllers"],
  [
    /^(controllers\/|kube\/|providers\/[^/]+\.ts$)/,
    /^hcloud_api\//,
    "no generic code reads a cloud's API or errors",
  ],
  // The load balancers' sub-rooms (core/, own/, sharing/, ...) stand below its top (architecture review).
  [
    /^providers\/hcloud\/load_balancers\/[^/]+\//,
    /^providers\/hcloud\/load_balancers\/[^/]+\.ts$/,
    "a sub-room of load_balancers/ does not reach up to the room's top level",
  ],
];

Deno.test("layout: no import runs upward or across a room's door", () => {
  const files = sources();
  const rooms = files.filter((f) => f.endsWith("/mod.ts")).map((f) => f.slice(0, -"mod.ts".length));
  const problems: string[] = [];
  for (const file of files) {
    const test = file.endsWith("_test.ts");
    for (const target of importsOf(file)) {
      const allowed = ALLOWED.find(([layer]) => layer.test(file))?.[1];
      if (!test && allowed && !allowed.some((prefix) => target.startsWith(prefix))) {
        problems.push(`${file} → ${target}: ${file.split("/")[0]}/ may import only ${allowed.join(", ")}`);
      }
      for (const [from, to, why] of FORBIDDEN) {
        if (!test && from.test(file) && to.test(target)) problems.push(`${file} → ${target}: ${why}`);
      }
      for (const room of rooms) {
        if (target.startsWith(room) && !file.startsWith(room) && target !== `${room}mod.ts`) {
          problems.push(`${file} → ${target}: enter ${room} through ${room}mod.ts`);
        }
      }
    }
  }
  assertEquals(problems, []);
});

Deno.test("layout: the rule sees imports (a self-check of the reader)", () => {
  const seen = importsOf("providers/hcloud/mod.ts");
  assertEquals(seen.includes("hcloud_api/mod.ts"), true, seen.join(", "));
  assertEquals(seen.includes("providers/hcloud/load_balancers/mod.ts"), true, seen.join(", "));
});

/** The import circles: strongly connected components of more than one file (Tarjan's algorithm). */
function importCircles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

Deno.test("layout: no import circles, type imports included", () => {
  const graph = new Map(sources().map((f) => [f, importsOf(f)]));
  assertEquals(importCircles(graph).map((c) => c.join(" → ")), []);
});

Deno.test("layout: the circle finder finds circles (a self-check)", () => {
  const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]], ["e", ["e2"]], ["e2", []]]);
  assertEquals(importCircles(graph), [["a", "b", "c"]]);
});

/** The helpers that start a real component (an apiserver, a kubelet, helm, the CCM as a process). */
const REAL_COMPONENTS = [
  "testing/kube_cluster.ts",
  "testing/ccm_harness.ts",
  "testing/ccm_process.ts",
  "testing/kubelet.ts",
  "testing/kube_proxy.ts",
  "testing/kube_controller_manager.ts",
  "testing/containerd.ts",
  "testing/helm.ts",
  "testing/go_program.ts",
  "testing/e2e_scenario.ts",
  "testing/drain_scenario.ts",
  "testing/fault_scenario.ts",
];

/** Everything `file` reaches through imports of ours. */
function reach(file: string, graph: Map<string, string[]>, seen = new Set<string>()): Set<string> {
  for (const next of graph.get(file) ?? []) {
    if (!seen.has(next)) {
      seen.add(next);
      reach(next, graph, seen);
    }
  }
  return seen;
}

Deno.test("layout: tests outside tests/ (the unit tier) start no real component", () => {
  const graph = new Map(sources().map((f) => [f, importsOf(f)]));
  const problems: string[] = [];
  for (const file of graph.keys()) {
    if (!file.endsWith("_test.ts") || file.startsWith("tests/")) continue;
    const reached = reach(file, graph);
    for (const helper of REAL_COMPONENTS) {
      if (reached.has(helper)) problems.push(`${file} reaches ${helper}: it belongs in tests/`);
    }
  }
  assertEquals(problems, []);
  for (const helper of REAL_COMPONENTS) assertEquals(graph.has(helper), true, `${helper} exists`);
});

Deno.test("layout: no controller names a provider's setting (the provider says why, in its own words)", () => {
  const problems = sources()
    .filter((f) => f.startsWith("controllers/") && !f.endsWith("_test.ts"))
    .flatMap((f) =>
      [...Deno.readTextFileSync(new URL(f, ROOT)).matchAll(/\b(HCLOUD|ROBOT)_[A-Z_]+/g)].map((m) =>
        `${f}: ${m[0]}`
      )
    );
  assertEquals(problems, []);
});
