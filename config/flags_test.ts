import { assert, assertEquals } from "../testing/assert.ts";
import { FLAGS, type Flags, helpText, parseFlags } from "./flags.ts";
import { ENV_VARS } from "./env.ts";
import { formatDuration, parseDuration } from "../lib/duration.ts";
import { resolveControllers } from "./controllers_flag.ts";

Deno.test("flags: upstream defaults", () => {
  const { flags, errors } = parseFlags([]);
  assertEquals(errors, []);
  assertEquals(
    [
      flags.leaderElect,
      flags.leaderElectLeaseDuration,
      flags.leaderElectRenewDeadline,
      flags.leaderElectRetryPeriod,
    ],
    [true, 15_000, 10_000, 2_000],
  );
  assertEquals([flags.leaderElectResourceNamespace, flags.leaderElectResourceName], [
    "kube-system",
    "cloud-controller-manager",
  ]);
  assertEquals([flags.nodeMonitorPeriod, flags.nodeStatusUpdateFrequency, flags.routeReconciliationPeriod], [
    5_000,
    300_000,
    10_000,
  ]);
  assertEquals([flags.kubeApiQps, flags.kubeApiBurst, flags.securePort, flags.bindAddress], [
    100,
    200,
    10258,
    "0.0.0.0",
  ]);
  assertEquals([flags.concurrentServiceSyncs, flags.concurrentNodeSyncs, flags.clusterName], [
    5,
    1,
    "kubernetes",
  ]);
  assertEquals(flags.controllers, ["*"]);
});

Deno.test("flags: forms --a=b, --a b, -a=b, bare booleans, and the official CCM's compatibility flags", () => {
  const { flags, errors } = parseFlags([
    "--kubeconfig",
    "/k",
    "-leader-elect=false",
    "--configure-cloud-routes=f",
    "--allow-untagged-cloud",
    "--webhook-secure-port=0",
    "--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true",
    "--route-reconciliation-period=30s",
    "--cluster-cidr=10.244.0.0/16,fd00::/56",
  ]);
  assertEquals(errors, []);
  assertEquals([
    flags.kubeconfig,
    flags.leaderElect,
    flags.configureCloudRoutes,
    flags.routeReconciliationPeriod,
  ], [
    "/k",
    false,
    false,
    30_000,
  ]);
});

Deno.test("flags: every problem is collected and names the flag and value", () => {
  const { errors } = parseFlags([
    "--secure-port=70000",
    "--bind-address=nope",
    "--cluster-cidr=10.0.0.0/33",
    "--kube-api-qps=0",
    "--leader-elect-renew-deadline=20s",
    "--log-format=xml",
    "stray",
    "--tls-cert-file=/c",
    "--concurrent-node-syncs",
  ]);
  const text = errors.join("\n");
  for (
    const part of [
      "--secure-port: 70000 is not a port",
      '--bind-address: "nope" is not an IP address',
      '--cluster-cidr: "10.0.0.0/33" is not a CIDR range',
      "--kube-api-qps: must be greater than 0",
      "--leader-elect-lease-duration (15s) must be greater than --leader-elect-renew-deadline (20s)",
      '--log-format: "xml" is not one of text, json',
      'unexpected argument "stray"',
      "--tls-cert-file and --tls-private-key-file go together",
      "--concurrent-node-syncs needs a value",
    ]
  ) assert(text.includes(part), `missing "${part}" in:\n${text}`);
});

Deno.test("flags: --help lists every flag with its default", () => {
  const help = helpText();
  assert(help.includes("--node-status-update-frequency duration"));
  assert(help.includes('(default "5m0s")'));
  assert(help.includes('(default "cloud-controller-manager")'));
  // A boolean that defaults to true says so; every flag's default is shown once.
  assert(help.includes("Create routes for pod CIDRs in the cloud network (default true)"), help);
  for (const f of FLAGS.filter((f) => f.type === "bool" && f.default === true)) {
    const entry = help.split(`  --${f.name}\n`)[1]?.split("\n")[0] ?? "";
    assert(entry.endsWith("(default true)"), `--${f.name}: ${entry}`);
  }
  // Every variable the CCM reads is listed by its full name.
  for (const name of ENV_VARS) assert(new RegExp(`\\b${name}\\b`).test(help), name);
});

Deno.test("durations: Go syntax", () => {
  assertEquals(parseDuration("1h30m"), 5_400_000);
  assertEquals(parseDuration("1.5s"), 1_500);
  assertEquals(parseDuration("300ms"), 300);
  assertEquals(parseDuration("0"), 0);
  for (const bad of ["", "5", "5x", "s", "1h-", "-1s"]) assertEquals(parseDuration(bad), undefined, bad);
  assertEquals(formatDuration(300_000), "5m0s");
  assertEquals(formatDuration(1_500), "1.5s");
  assertEquals(formatDuration(3_600_000), "1h0m0s");
});

Deno.test("controllers: names, aliases, star and disabling", () => {
  const names = (items: string[]) => [...resolveControllers(items).enabled].sort();
  assertEquals(names(["*"]).length, 4);
  assertEquals(names(["*", "-node-route-controller"]), [
    "cloud-node-controller",
    "cloud-node-lifecycle-controller",
    "service-lb-controller",
  ]);
  assertEquals(names(["cloud-node", "service"]), ["cloud-node-controller", "service-lb-controller"]);
  assertEquals(names(["*", "-route", "-service"]), [
    "cloud-node-controller",
    "cloud-node-lifecycle-controller",
  ]);
  assertEquals(resolveControllers(["bogus"]).errors.length, 1);
  // The CSR approver is off unless named, with or without the star.
  assertEquals(names(["*"]).includes("kubelet-serving-csr-approver"), false);
  assertEquals(names(["*", "csr-approver"]).length, 5);
  assertEquals(names(["kubelet-serving-csr-approver"]), ["kubelet-serving-csr-approver"]);
  assertEquals(names(["*", "csr-approver", "-csr-approver"]).length, 4);
});

Deno.test("flags: the official CCM's upstream flags are accepted and reported as ignored; others are errors", () => {
  const { flags, errors, ignored } = parseFlags([
    "--v=2",
    "--authentication-skip-lookup",
    "--concurrent-node-status-updates",
    "3",
    "--cluster-name=prod",
    "--vmodule=foo=3",
  ]);
  assertEquals(errors, []);
  assertEquals(flags.clusterName, "prod");
  assertEquals(ignored, [
    "--v=2",
    "--authentication-skip-lookup",
    "--concurrent-node-status-updates=3",
    "--vmodule=foo=3",
  ]);
  assertEquals(parseFlags(["--no-such-flag=1"]).errors, ["unknown flag --no-such-flag"]);
  assertEquals(parseFlags(["--master"]).errors, ["--master needs a value"]);
});

Deno.test("flags: the Flags type is the table's effective flags, camel-cased, with each type's value", () => {
  const { flags } = parseFlags(["--kube-api-qps=7", "--controllers=service", "--leader-elect=F"]);
  const { kubeApiQps, controllers, leaderElect, logLevel }: Pick<
    Flags,
    "kubeApiQps" | "controllers" | "leaderElect" | "logLevel"
  > = flags;
  assertEquals([kubeApiQps, controllers, leaderElect, logLevel], [7, ["service"], false, "info"]);
  const effective = FLAGS.filter((f) => !("ignored" in f)).map((f) =>
    f.name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
  );
  assertEquals(Object.keys(flags).sort(), effective.sort());
  // @ts-expect-error: flags accepted only for compatibility have no field
  assertEquals(flags.allowUntaggedCloud, undefined);
  // Go's strconv.ParseBool, as the upstream CCM's pflag reads booleans.
  assertEquals(parseFlags(["--leader-elect=tRuE"]).errors, [
    '--leader-elect: "tRuE" is not a boolean (true or false)',
  ]);
});

Deno.test("flags: --load-balancer-class-exclusive needs the class it serves", () => {
  assertEquals(parseFlags(["--load-balancer-class-exclusive"]).errors, [
    "--load-balancer-class-exclusive needs --load-balancer-class (the class this CCM serves)",
  ]);
  assertEquals(
    parseFlags(["--load-balancer-class-exclusive", "--load-balancer-class=hcloud.deno-ccm/lb"]).errors,
    [],
  );
});
