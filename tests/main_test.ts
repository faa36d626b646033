/**
 * The `main.ts` process: configuration errors, a run against a real apiserver and the simulator
 * (health, readiness, metrics, leader lease, orderly SIGTERM), and an unreachable apiserver.
 */
import { assert, assertEquals, assertMatch } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { DEMO_SEED } from "../hcloud_sim/main.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";
import { eventually, freePort } from "../testing/helpers.ts";
import { spawnCcm } from "../testing/ccm_process.ts";

Deno.test("main: every configuration error is reported at once, exit code 2, secrets never printed", async () => {
  const dir = await Deno.makeTempDir();
  const canary = "CANARY-TOKEN-0123456789-abcdefghijklmnopqrstuvwxyz-0123456789-ABC";
  try {
    await Deno.writeTextFile(`${dir}/bad.kubeconfig`, "clusters: [unclosed");
    const p = spawnCcm(
      [
        `--kubeconfig=${dir}/bad.kubeconfig`,
        "--leader-elect=maybe",
        "--node-monitor-period=5x",
        "--no-such-flag",
        "--controllers=*,-nope",
      ],
      {
        HCLOUD_TOKEN: canary,
        HCLOUD_NETWORK: "k8s",
        HCLOUD_INSTANCES_ADDRESS_FAMILY: "ipv5",
        HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
        HCLOUD_LOAD_BALANCERS_NETWORK_ZONE: "eu-central",
        HCLOUD_SERVER_CACHE_MAX_AGE: "soon",
      },
    );
    const status = await p.status;
    assertEquals(status.code, 2);
    const out = p.output();
    assertEquals(out.match(/invalid configuration/g)?.length, 1, out);
    for (
      const expected of [
        `kubeconfig ${dir}/bad.kubeconfig: cannot parse`,
        '--leader-elect: "maybe" is not a boolean',
        '--node-monitor-period: "5x" is not a duration',
        "unknown flag --no-such-flag",
        'unknown controller "-nope"',
        'HCLOUD_INSTANCES_ADDRESS_FAMILY: "ipv5"',
        "HCLOUD_LOAD_BALANCERS_LOCATION and HCLOUD_LOAD_BALANCERS_NETWORK_ZONE are mutually exclusive",
        'HCLOUD_SERVER_CACHE_MAX_AGE: "soon"',
      ]
    ) assert(out.includes(expected), `missing "${expected}" in:\n${out}`);
    assert(!out.includes(canary), "the token must never be printed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "main: runs against a real apiserver and the simulator; SIGTERM releases the lease within 5 s",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cluster = await TestCluster.start();
    const t = await startTestSim();
    applySeed(t.sim, DEMO_SEED);
    const metricsPort = freePort();
    try {
      const p = spawnCcm(
        [
          `--kubeconfig=${cluster.kubeconfigPath}`,
          "--cluster-cidr=10.244.0.0/16",
          "--leader-elect-resource-name=ccm-test",
          // Upstream flags from official-CCM manifests: accepted, named once, without effect.
          "--v=2",
          "--authentication-skip-lookup",
        ],
        {
          HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
          HCLOUD_ENDPOINT: t.sim.endpoint,
          HCLOUD_NETWORK: "k8s",
          HCLOUD_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
        },
      );
      await eventually(
        async () => (await p.get("/readyz").catch(() => ({ status: 0 }))).status === 200,
        30_000,
      );
      assertEquals((await p.get("/healthz")).text, "ok");
      assertEquals((await p.get("/other")).status, 404);
      const metrics = (await p.get("/metrics")).text;
      assertMatch(metrics, /^kube_api_requests_total\{code="200",verb="get"\} \d+/m);
      // hcloud-go's names and labels, as the official CCM exports them.
      assertMatch(
        metrics,
        /^hcloud_api_requests_total\{api_endpoint="\/locations",code="200",method="get"\} 1$/m,
      );
      assertMatch(metrics, /^hcloud_api_in_flight_requests 0$/m);
      // ... and on HCLOUD_METRICS_ADDRESS, where the official CCM's PodMonitor scrapes.
      const official = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      assertMatch(await official.text(), /^hcloud_api_requests_total\{api_endpoint="\/locations"/m);
      assertMatch(
        p.output(),
        /accepted without effect \(upstream cloud-controller-manager flags\): --v=2 --authentication-skip-lookup/,
      );
      assertMatch(metrics, /^leader_election_master_status\{name="ccm-test"\} 1$/m);
      assertMatch(metrics, /^process_resident_memory_bytes \d+/m);
      const lease = JSON.parse(
        await cluster.kubectl(["-n", "kube-system", "get", "lease", "ccm-test", "-o", "json"]),
      );
      assert(lease.spec.holderIdentity, "the lease has a holder");

      const sent = Date.now();
      p.child.kill("SIGTERM");
      const status = await p.status;
      const took = Date.now() - sent;
      assertEquals(status.code, 0, p.output());
      assert(took < 5_000, `stopped in ${took} ms`);
      const released = JSON.parse(
        await cluster.kubectl(["-n", "kube-system", "get", "lease", "ccm-test", "-o", "json"]),
      );
      assertEquals(released.spec.holderIdentity ?? "", "");
      assert(!p.output().includes(DEFAULT_SIM_TOKEN), "the token must never be logged");
    } finally {
      await t.finish();
      await cluster.stop();
    }
  },
});

Deno.test("main: an unreachable apiserver is logged at once naming URL and cause, retried, and /readyz says why", async () => {
  const dir = await Deno.makeTempDir();
  const t = await startTestSim();
  try {
    const deadPort = freePort();
    await Deno.writeTextFile(
      `${dir}/kubeconfig`,
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: `https://127.0.0.1:${deadPort}` } }],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const p = spawnCcm([`--kubeconfig=${dir}/kubeconfig`, "--controllers=cloud-node"], {
      HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
      HCLOUD_ENDPOINT: t.sim.endpoint,
    });
    await eventually(
      async () => (await p.get("/healthz").catch(() => ({ status: 0 }))).status === 200,
      20_000,
    );
    const why =
      `cannot reach the Kubernetes API: GET /version: cannot reach https://127.0.0.1:${deadPort}: ` +
      "connection refused (tcp connect error: Connection refused";
    await eventually(() => (p.output().split(why).length - 1) >= 2, 20_000);
    const ready = await p.get("/readyz");
    assertEquals(ready.status, 503);
    assert(ready.text.includes(`[-]kube-apiserver failed: ${why}`), ready.text);
    p.child.kill("SIGTERM");
    assertEquals((await p.status).code, 0);
  } finally {
    await t.finish();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "main: a rejected token and a busy port are configuration errors (exit 2) naming the setting",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cluster = await TestCluster.start();
    const t = await startTestSim();
    try {
      const wrong = spawnCcm(
        [`--kubeconfig=${cluster.kubeconfigPath}`, "--leader-elect=false"],
        { HCLOUD_TOKEN: "x".repeat(64), HCLOUD_ENDPOINT: t.sim.endpoint },
      );
      assertEquals((await wrong.status).code, 2, wrong.output());
      assertMatch(
        wrong.output(),
        /HCLOUD_TOKEN: rejected by the Hetzner API at http:\/\/127\.0\.0\.1:\d+\/v1 \(401/,
      );
      assert(!wrong.output().includes("x".repeat(64)), "never the token");

      // An unreachable cloud API: logged and said by /readyz at its first failure (not after the
      // retries), naming the endpoint and the cause.
      const deadPort = freePort();
      const unreachable = spawnCcm(
        [`--kubeconfig=${cluster.kubeconfigPath}`, "--leader-elect=false"],
        { HCLOUD_TOKEN: DEFAULT_SIM_TOKEN, HCLOUD_ENDPOINT: `http://127.0.0.1:${deadPort}/v1` },
      );
      try {
        const why = `GET /locations: cannot reach http://127.0.0.1:${deadPort}: connection refused`;
        const started = Date.now();
        await eventually(() => unreachable.output().includes(why), 20_000);
        const firstLogMs = Date.now() - started;
        await eventually(async () => {
          const ready = await unreachable.get("/readyz").catch(() => ({ status: 0, text: "" }));
          return ready.status === 503 && ready.text.includes(`[-]cloud failed: ${why}`);
        }, 60_000);
        console.log(`unreachable cloud API: named in the log after ${firstLogMs} ms`);
      } finally {
        unreachable.child.kill("SIGTERM");
        await unreachable.status;
      }

      const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (holder.addr as Deno.NetAddr).port;
      try {
        const busy = spawnCcm(
          [`--kubeconfig=${cluster.kubeconfigPath}`, "--leader-elect=false", `--secure-port=${port}`],
          { HCLOUD_TOKEN: DEFAULT_SIM_TOKEN, HCLOUD_ENDPOINT: t.sim.endpoint },
        );
        assertEquals((await busy.status).code, 2, busy.output());
        assert(
          busy.output().includes(`--bind-address/--secure-port: cannot listen on 127.0.0.1:${port}`),
          busy.output(),
        );
      } finally {
        holder.close();
      }
    } finally {
      await t.finish();
      await cluster.stop();
    }
  },
});

Deno.test({
  name: "main: HCLOUD_TOKEN_FILE that is a device, a FIFO or too big exits 2 at once naming it (probe P7)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      assert(new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).outputSync().success, "mkfifo");
      await Deno.writeTextFile(`${dir}/big`, "x".repeat(1 << 20));
      for (const file of ["/dev/zero", `${dir}/fifo`, `${dir}/big`]) {
        const ccm = spawnCcm([`--kubeconfig=${dir}/missing`, "--leader-elect=false"], {
          HCLOUD_TOKEN_FILE: file,
        });
        assertEquals((await ccm.status).code, 2, ccm.output());
        assert(ccm.output().includes(`HCLOUD_TOKEN_FILE: cannot read ${file}: ${file} `), ccm.output());
        // The read no longer hides what else is wrong.
        assert(ccm.output().includes(`kubeconfig ${dir}/missing: file not found`), ccm.output());
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
