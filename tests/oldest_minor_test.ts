/**
 * Both ends of the supported range (README, "Kubernetes version for tests"): the whole suite runs
 * against the newest minor's apiserver; this test runs, against the oldest minor's (v1.33, built by
 * `hack/kube_assets/build.sh --oldest`), the tests whose outcome depends on the apiserver — list and
 * watch through compaction and restarts, leader election, the end-to-end scenario (also with IPv6 and
 * dual-stack), the admission policy's CEL, the controllers, shared balancers, the harness's Nodes
 * against a v1.33 kubelet's — and a conformance subset with one case per kind of Kubernetes write
 * (Node initialization, status and deletion, Service status, finalizer and events, routes' Node
 * condition).
 */
import { assert } from "../testing/assert.ts";

const REPO = new URL("..", import.meta.url).pathname;

/** The tests run again on the oldest minor. */
const TESTS = [
  "tests/kube_runtime_test.ts",
  "tests/failover_test.ts",
  "tests/admission_policy_test.ts",
  "tests/address_families_test.ts",
  "tests/shared_balancers_test.ts",
  "tests/node_controllers_test.ts",
  "tests/route_controller_test.ts",
  "tests/service_controller_test.ts",
];
/**
 * Tests with real kubelets, run after the rest: beside the conformance subset (four CCMs, apiservers
 * and simulators at once on two cores) a v1.33 kubelet once took more than a minute to register its
 * Node (CI22), so they do not share the machine with it.
 */
const KUBELET_TESTS = ["tests/node_imitation_test.ts"];
/** The conformance cases run again on the oldest minor. */
const CASES = [
  "lb-default",
  "lb-node-added",
  "lb-server-deleted",
  "lb-etp-local",
  "nodes-basic",
  "nodes-dualstack",
  "nodes-server-deleted",
  "routes-basic",
  "routes-server-deleted",
  "upd-annotations-changed",
  "upd-delete-service",
  "upd-type-clusterip",
  "ann-https-managed",
  "adopt-by-name",
];

async function run(args: string[], env: Record<string, string>): Promise<{ ok: boolean; text: string }> {
  const out = await new Deno.Command(args[0], {
    args: args.slice(1),
    cwd: REPO,
    env,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { ok: out.success, text };
}

Deno.test({
  name: "oldest supported minor (v1.33): the apiserver-dependent tests and a conformance subset pass",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const built = await run(["bash", "hack/kube_assets/build.sh", "--oldest"], {});
    if (!built.ok) {
      throw new Error(
        `hack/kube_assets/build.sh --oldest failed (needs Go and the Go module proxy):\n${built.text}`,
      );
    }
    const assets = built.text.trim().split("\n").at(-1)!;
    const version = await run([`${assets}/kube-apiserver`, "--version"], {});
    assert(version.text.startsWith("Kubernetes v1.33."), version.text);
    const env = { KUBEBUILDER_ASSETS: assets, NO_COLOR: "1" };

    // The two halves are independent processes (each starts its own apiservers and simulators on
    // ports of its own), so they run at once: the suite waits for the longer, not for both.
    const [light, cases] = await Promise.all([
      run([Deno.execPath(), "test", "--allow-all", "--no-check=remote", ...TESTS], env),
      run(
        [
          Deno.execPath(),
          "run",
          "--allow-all",
          "conformance/main.ts",
          "--parallel",
          "4",
          "--only",
          CASES.join(","),
        ],
        env,
      ),
    ]);

    const kubelets = await run(
      [Deno.execPath(), "test", "--allow-all", "--no-check=remote", ...KUBELET_TESTS],
      env,
    );

    for (const [files, tests] of [[TESTS, light], [KUBELET_TESTS, kubelets]] as const) {
      await t.step(`the tests (${files.length} files)`, () => {
        const summary = tests.text.split("\n").filter((l) => /^(ok|FAILED) \|/.test(l)).join("; ");
        console.log(`on ${version.text.trim()}: ${summary}`);
        assert(tests.ok, `failed on ${version.text.trim()}:\n${tests.text.slice(-6000)}`);
      });
    }

    await t.step(`a conformance subset (${CASES.length} cases)`, () => {
      const summary = cases.text.split("\n").find((l) => l.startsWith("conformance:")) ?? "";
      console.log(`on ${version.text.trim()}: ${summary}`);
      assert(cases.ok && summary.includes(" 0 unlisted differences"), cases.text.slice(-6000));
    });
  },
});
