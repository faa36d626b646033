/**
 * The values Hetzner installers pass to the official chart, given to ours unchanged
 * (tests/fixtures/installers/): kube-hetzner (current and older), hcloud-k8s (Talos), hcloud-talos and
 * the other helm_release modules, a cluster set up for the Syself chart, a full copy of the official
 * values.yaml and `helm get values --all` of an official v1.35.0 release. Each is linted, installed for
 * real into the test apiserver with `helm install`, and its objects read back: our image, flags the CCM
 * accepts, an environment (Secrets resolved) the CCM's configuration accepts, the RBAC bound to the
 * pod's ServiceAccount, NOTES naming nothing ignored, and what the file asks for. Also: keys neither
 * chart knows are ignored and named in NOTES; the chart's list of the official sections' keys is the
 * schema's.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { parseFlags } from "../config/flags.ts";
import { readHcloudConfig } from "../providers/hcloud/mod.ts";
import { CHART, type Rendered, runHelm } from "../testing/helm.ts";
import { parse as parseYaml } from "yaml";

const REPO = new URL("..", import.meta.url).pathname;
const FIXTURES = `${REPO}tests/fixtures/installers`;
const NS = "kube-system";
const TOKEN = "t".repeat(64);
const SECRETS: Record<string, Record<string, string>> = {
  hcloud: { token: TOKEN, network: "k8s", "robot-user": "robot-u", "robot-password": "robot-p" },
  hetzner: { hcloud: TOKEN, network: "k8s", "robot-user": "syself-u", "robot-password": "syself-p" },
};

/** The container's environment with Secret references resolved, as the kubelet would give it. */
function resolveEnv(c: Rendered): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    env[e.name] = ref ? SECRETS[ref.name]?.[ref.key] : e.value;
  }
  return env;
}

/**
 * Every flag the user set in `args` takes effect: it is rendered once, with the user's value (the
 * chart renders some flags itself; the last of two would win in the CCM's parser). Security review
 * and docs review: kube-hetzner's `secure-port: "10288"` was followed by the chart's `--secure-port=10258`.
 */
function assertEffective(rendered: string[], asked: Record<string, unknown>): void {
  const names = rendered.map((a) => a.replace(/^--/, "").split("=")[0]);
  assertEquals(names.filter((n, i) => names.indexOf(n) !== i), [], "no flag rendered twice");
  for (const [key, value] of Object.entries(asked)) {
    if (value === null || key === "controllers") continue; // null drops a flag; controllers are merged
    const want = value === "" ? `--${key}` : `--${key}=${value}`;
    assert(rendered.includes(want), `args.${key} takes effect: ${want} in ${rendered.join(" ")}`);
  }
}

/** What each installer's file must give, beyond what every file must. */
const EXPECT: Record<string, (w: Rendered, env: Record<string, string | undefined>) => Promise<void> | void> =
  {
    "kube-hetzner.yaml": (w, env) => {
      const pod = w.spec.template.spec;
      assertEquals(pod.hostNetwork, true);
      assert(pod.containers[0].args.includes("--cluster-cidr=10.42.0.0/16"));
      assertEquals(env.HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP, "false");
      assertEquals(env.HCLOUD_NETWORK, "k8s");
      assertEquals([env.ROBOT_ENABLED, env.HCLOUD_NETWORK_ROUTES_ENABLED], ["true", "false"]);
      assertEquals(env.HCLOUD_INSTANCES_ADDRESS_FAMILY, "dualstack");
      assertEquals(pod.nodeSelector, { "node-role.kubernetes.io/control-plane": "true" });
      // Cilium's NoExecute taint on a fresh Node would evict the CCM that must initialize it.
      for (const effect of ["NoSchedule", "NoExecute"]) {
        assert(
          pod.tolerations.some((t: { key?: string; effect?: string }) =>
            t.key === "node.cilium.io/agent-not-ready" && t.effect === effect
          ),
          `tolerates node.cilium.io/agent-not-ready:${effect}`,
        );
      }
    },
    "kube-hetzner-older.yaml": (w, env) => {
      const args: string[] = w.spec.template.spec.containers[0].args;
      assert(args.includes("--allocate-node-cidrs=true"), 'networking.enabled: "true" (a string) is on');
      assert(args.includes("--secure-port=10288"));
      assertEquals(env.ROBOT_ENABLED, "true", 'robot.enabled: "true" (a string) is on');
    },
    "hcloud-k8s.yaml": (w, env) => {
      assertEquals(w.kind, "DaemonSet");
      assertEquals(w.spec.template.spec.nodeSelector, { "node-role.kubernetes.io/control-plane": "" });
      assertEquals([env.KUBERNETES_SERVICE_HOST, env.KUBERNETES_SERVICE_PORT], ["127.0.0.1", "7445"]);
      assertEquals(env.HCLOUD_LOAD_BALANCERS_PRIVATE_SUBNET_IP_RANGE, "10.0.96.0/19");
      // Bare-metal pools: Robot on, its credentials from the Secret keys the module writes, routes off.
      assertEquals([env.ROBOT_ENABLED, env.HCLOUD_NETWORK_ROUTES_ENABLED], ["true", "false"]);
      const robotUser = w.spec.template.spec.containers[0].env.find((e: { name: string }) =>
        e.name === "ROBOT_USER"
      );
      const ref = robotUser?.valueFrom?.secretKeyRef;
      assertEquals([ref?.name, ref?.key], ["hcloud", "robot-user"]);
    },
    "hcloud-talos.yaml": (w) => {
      assert(w.spec.template.spec.containers[0].args.includes("--cluster-cidr=10.0.16.0/20"));
    },
    "syself.yaml": async (w, env) => {
      const c = w.spec.template.spec.containers[0];
      assert(c.args.includes("--cloud-provider=hetzner"));
      assertEquals(env.ROBOT_USER, undefined);
      const dir = await Deno.makeTempDir();
      try {
        const { config } = await readHcloudConfig(env, dir);
        assertEquals([config.token, config.robot.user, config.robot.hrobotProviderIds], [
          TOKEN,
          "syself-u",
          false,
        ]);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
      assertEquals(c.volumeMounts[0].mountPath, "/etc/hetzner-secret");
    },
    "official-values-copy.yaml": (w) => {
      assertEquals(w.spec.selector.matchLabels, {
        "app.kubernetes.io/name": "hcloud-cloud-controller-manager",
        "app.kubernetes.io/instance": "hccm",
      });
      assertEquals(w.spec.replicas, 1);
    },
    "official-values-v1.35.yaml": (w) => {
      const pod = w.spec.template.spec;
      assertEquals(pod.securityContext.fsGroup, 65532);
      assertEquals(pod.securityContext.seccompProfile, { type: "RuntimeDefault" }, "ours kept beside theirs");
      assertEquals(pod.containers[0].securityContext.readOnlyRootFilesystem, true);
    },
  };

Deno.test({
  name: "chart: every installer's values install unchanged, with our image, flags, env and RBAC",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const cluster = await TestCluster.start();
    const env = { KUBECONFIG: cluster.kubeconfigPath };
    try {
      for (const [name, data] of Object.entries(SECRETS)) await cluster.createSecret(NS, name, data);
      const files = [...Deno.readDirSync(FIXTURES)].map((e) => e.name).sort();
      assertEquals(files, Object.keys(EXPECT).sort(), "every fixture has its expectations");
      for (const file of files) {
        await t.step(file, async () => {
          const values = ["--values", `${FIXTURES}/${file}`];
          const lint = await runHelm(["lint", "--strict", CHART, ...values]);
          assert(lint.ok, `helm lint:\n${lint.stdout}${lint.stderr}`);
          const install = await runHelm(["install", "hccm", CHART, "--namespace", NS, ...values], env);
          assert(install.ok, install.stderr);
          try {
            assert(!install.stdout.includes("Ignored"), install.stdout);
            const kind = parseYaml(await Deno.readTextFile(`${FIXTURES}/${file}`))?.kind ?? "Deployment";
            const w = JSON.parse(
              await cluster.kubectl(["-n", NS, "get", kind, "hcloud-cloud-controller-manager", "-o", "json"]),
            );
            const c = w.spec.template.spec.containers[0];
            assert(c.image.startsWith("ghcr.io/deno-ccm/deno-ccm:"), `image ${c.image}`);
            assertEquals(parseFlags(c.args).errors, [], "the CCM accepts the flags");
            assertEffective(c.args, parseYaml(await Deno.readTextFile(`${FIXTURES}/${file}`))?.args ?? {});
            assertEquals(
              c.ports.find((p: { name: string }) => p.name === "status").containerPort,
              parseFlags(c.args).flags.securePort,
              "the probes' port is the one the CCM serves on",
            );
            const resolved = resolveEnv(c);
            const config = await readHcloudConfig(resolved, "/nonexistent");
            assertEquals(config.errors, [], "the CCM accepts the environment");
            const binding = JSON.parse(
              await cluster.kubectl([
                "get",
                "clusterrolebinding",
                "system:hcloud-cloud-controller-manager:deno-ccm",
                "-o",
                "json",
              ]),
            );
            assertEquals(binding.subjects, [{
              kind: "ServiceAccount",
              name: w.spec.template.spec.serviceAccountName,
              namespace: NS,
            }]);
            const can = await cluster.kubectl([
              "auth",
              "can-i",
              "patch",
              "nodes",
              `--as=system:serviceaccount:${NS}:${w.spec.template.spec.serviceAccountName}`,
            ]).catch((e: Error) => e.message);
            assertEquals(can.trim(), "yes");
            await EXPECT[file](w, resolved);
          } finally {
            const un = await runHelm(["uninstall", "hccm", "--namespace", NS, "--wait"], env);
            assert(un.ok, un.stderr);
          }
        });
      }

      await t.step(
        "an env: name that looks like the CCM's but is not read is named in NOTES (Q12)",
        async () => {
          const r = await runHelm([
            "install",
            "hccm",
            CHART,
            "--namespace",
            NS,
            "--dry-run",
            "--set",
            "env.HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECT_NAMESPACES.value=,env.HCLOUD_DEBUG.value=true,env.HTTPS_PROXY.value=x",
          ], env);
          assert(r.ok, r.stderr);
          assert(
            r.stdout.includes(
              "Not read by deno-ccm, so without effect (misspelled?): env.HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECT_NAMESPACES.",
            ),
            r.stdout,
          );
        },
      );

      await t.step(
        "a flag the chart renders itself takes the user's value; leader-elect=false is refused by name",
        async () => {
          const set =
            "networking.enabled=true,args.cluster-cidr=10.99.0.0/16,args.allocate-node-cidrs=false," +
            "args.secure-port=10300,csrApprover.enabled=true,args.kubelet-serving-csr-deny=false";
          const r = await runHelm(["template", "hccm", CHART, "--namespace", NS, "--set", set]);
          assert(r.ok, r.stderr);
          const deployment = r.stdout.split("\n---\n").map((d) => parseYaml(d) as Rendered)
            .find((d) => d?.kind === "Deployment")!;
          const c = deployment.spec.template.spec.containers[0];
          assertEffective(c.args, {
            "cluster-cidr": "10.99.0.0/16",
            "allocate-node-cidrs": false,
            "secure-port": 10300,
            "kubelet-serving-csr-deny": false,
          });
          const { flags } = parseFlags(c.args);
          assertEquals([flags.clusterCidr, flags.allocateNodeCidrs, flags.securePort], [
            "10.99.0.0/16",
            false,
            10300,
          ]);
          const refused = await runHelm(["template", "hccm", CHART, "--set", "args.leader-elect=false"]);
          assert(!refused.ok, "rendered");
          assert(
            refused.stderr.includes("args.leader-elect=false: deno-ccm always elects a leader"),
            refused.stderr,
          );
        },
      );

      await t.step("keys neither chart knows are ignored and named in NOTES", async () => {
        const r = await runHelm([
          "install",
          "hccm",
          CHART,
          "--namespace",
          NS,
          "--dry-run",
          "--set",
          "futureKey=1,networking.mtu=1450,monitoring.podMonitor.interval=5s",
        ], env);
        assert(r.ok, r.stderr);
        assert(
          r.stdout.includes(
            "Ignored (not values of this chart, nor of the official one it replaces): futureKey, " +
              "monitoring.podMonitor.interval, networking.mtu.",
          ),
          r.stdout,
        );
      });
    } finally {
      await cluster.stop();
    }
  },
});

Deno.test("chart: the official sections' known keys (NOTES) are the schema's", async () => {
  const tpl = await Deno.readTextFile(`${CHART}/templates/_values.tpl`);
  const block = tpl.split('{{- define "deno-ccm.knownValues" -}}')[1].split("{{- end }}")[0];
  const known: Record<string, string[]> = parseYaml(block);
  const schema = JSON.parse(await Deno.readTextFile(`${CHART}/values.schema.json`));
  for (const [section, keys] of Object.entries(known)) {
    let node = schema;
    for (const part of section ? section.split(".") : []) node = node.properties[part];
    assertEquals([...keys].sort(), Object.keys(node.properties).sort(), `section "${section}"`);
    assert(
      node.additionalProperties !== false,
      `"${section}" ignores unknown keys (the official chart does)`,
    );
  }
  // Every lenient object of the schema is listed (otherwise an unknown key there would pass unnamed).
  const lenient: string[] = [];
  const walk = (node: Rendered, path: string) => {
    if (node.type !== "object" || !node.properties) return;
    if (node.additionalProperties === undefined) lenient.push(path);
    for (const [k, v] of Object.entries(node.properties)) walk(v as Rendered, path ? `${path}.${k}` : k);
  };
  walk(schema, "");
  assertEquals(lenient.sort(), Object.keys(known).sort());
});
