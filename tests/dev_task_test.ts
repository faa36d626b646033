/**
 * `deno task dev` never acts on a real cluster or cloud project by accident (issue 42 item 5): an
 * exported `KUBECONFIG`, token, endpoint, network or Robot credential is set aside (and named) for the
 * local cluster and simulator, while settings (opt-in features) pass; `--kubeconfig` alone is refused;
 * `--real-cluster` names the cluster and the project before it starts. The local cluster shows every
 * feature (issue 44 item 4): the chart's admission policy, kubectl as printed, the simulator's token.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { eventually } from "../testing/helpers.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { collectOutput, writeKubeconfig } from "../testing/ccm_process.ts";

const DEV = new URL("../hack/dev.ts", import.meta.url).pathname;

function dev(args: string[], env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", DEV, ...args],
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "/tmp", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const { output, status } = collectOutput(child);
  return {
    output,
    async stop() {
      try {
        child.kill("SIGINT");
      } catch { /* gone */ }
      await status;
    },
    status,
  };
}

Deno.test({
  name:
    "deno task dev: --kubeconfig alone is refused; --real-cluster names the cluster and the project first",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const refused = dev(["--kubeconfig=/etc/not-used"], {});
    assertEquals((await refused.status).code, 2, refused.output());
    assert(refused.output().includes("add --real-cluster"), refused.output());

    const t = await startTestSim();
    const dir = await Deno.makeTempDir();
    try {
      const kubeconfig = `${dir}/kubeconfig`;
      await writeKubeconfig(kubeconfig, { server: "https://127.0.0.1:9", token: "not-a-real-one" });
      t.sim.addServer({ name: "w1" });
      const real = dev(["--real-cluster", "--leader-elect=false", "--secure-port=0"], {
        KUBECONFIG: kubeconfig,
        HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
        HCLOUD_ENDPOINT: t.sim.endpoint,
        HCLOUD_METRICS_ADDRESS: "127.0.0.1:0",
      });
      try {
        await eventually(() => real.output().includes("acting on"), 30_000);
        const line = real.output().split("\n").find((l) => l.includes("acting on"))!;
        assert(line.includes("cluster https://127.0.0.1:9 (kubeconfig"), line);
        assert(line.includes("context c"), line);
        assert(
          line.includes(`the Hetzner project of HCLOUD_TOKEN at ${t.sim.endpoint} (it has 1 servers`),
          line,
        );
        assert(!real.output().includes(DEFAULT_SIM_TOKEN), "never the token");
      } finally {
        await real.stop();
      }
    } finally {
      await t.finish();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "deno task dev: an exported KUBECONFIG, token or Robot credential is set aside; settings pass; the local cluster has the admission policy and kubectl",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const local = dev([], {
      KUBECONFIG: "/etc/a-real-cluster",
      HCLOUD_TOKEN: "a".repeat(64),
      HCLOUD_NETWORK: "production-net",
      ROBOT_ENABLED: "true",
      ROBOT_USER: "someone",
      HCLOUD_LOAD_BALANCERS_TLS_SECRETS: "true",
    });
    try {
      await eventually(() => local.output().includes("simulator:  HCLOUD_ENDPOINT="), 240_000);
      assert(
        local.output().includes(
          "not used here (the local cluster and simulator): HCLOUD_NETWORK, HCLOUD_TOKEN, KUBECONFIG, " +
            "ROBOT_USER",
        ),
        local.output(),
      );
      assert(
        local.output().includes(`HCLOUD_TOKEN=${DEFAULT_SIM_TOKEN} (the simulator's token`),
        local.output(),
      );
      assert(
        local.output().includes("TLS certificates from Secrets: HCLOUD_LOAD_BALANCERS_TLS_SECRETS=true"),
      );
      // kubectl, as printed, reaches the local cluster, whose admission policy warns about a bad annotation.
      const command = local.output().split("\n").find((l) => l.startsWith("kubectl:"))!;
      const [kubectl, kubeconfig] = command.replace("kubectl:", "").trim().split(/\s+/);
      // The apiserver loads a new policy within a second or so: a Service made before that is not judged.
      let attempt = 0;
      let stderr = "";
      await eventually(async () => {
        const bad = {
          apiVersion: "v1",
          kind: "Service",
          metadata: {
            name: `bad-${attempt++}`,
            namespace: "default",
            annotations: { "load-balancer.hetzner.cloud/health-check-interval": "soon" },
          },
          spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
        };
        const applied = new Deno.Command(kubectl, {
          args: [kubeconfig, "apply", "-f", "-"],
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const w = applied.stdin.getWriter();
        await w.write(new TextEncoder().encode(JSON.stringify(bad)));
        await w.close();
        const out = await applied.output();
        stderr = new TextDecoder().decode(out.stderr);
        assert(out.success, stderr);
        return /Warning: .*health-check-interval.*soon/.test(stderr);
      }, 30_000).catch(() => {
        throw new Error(`kubectl apply of a bad annotation printed no policy warning: ${stderr}`);
      });
      // The CCM runs against the local cluster and simulator: it initializes the demo Nodes.
      await eventually(
        () => /initialized node|Node .* initialized|synced node/i.test(local.output()),
        120_000,
      )
        .catch(() => {
          throw new Error(local.output());
        });
      assert(!local.output().includes("a".repeat(64)), "never the token");
    } finally {
      await local.stop();
    }
  },
});
