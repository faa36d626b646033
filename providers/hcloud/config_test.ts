import { assert, assertEquals } from "../../testing/assert.ts";
import { DEFAULT_ENDPOINT, readHcloudConfig } from "./config.ts";

Deno.test("hcloud config: official defaults", async () => {
  const { config, errors, warnings } = await readHcloudConfig({ HCLOUD_TOKEN: "x".repeat(64) });
  assertEquals(errors, []);
  assertEquals(warnings, []);
  assertEquals([config.endpoint, config.addressFamily, config.zoneLabelEnabled, config.serverCacheMaxAgeMs], [
    DEFAULT_ENDPOINT,
    "ipv4",
    true,
    10_000,
  ]);
  assertEquals([config.network, config.networkRoutesEnabled, config.loadBalancers.enabled], [
    undefined,
    false,
    true,
  ]);
  assertEquals([config.loadBalancers.disablePublicNetwork, config.loadBalancers.usesProxyProtocol], [
    undefined,
    undefined,
  ]);
});

Deno.test("hcloud config: token file, Go booleans, durations, and every bad value reported", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/t`, "short\n");
    const ok = await readHcloudConfig({
      HCLOUD_TOKEN_FILE: `${dir}/t`,
      HCLOUD_NETWORK: "k8s",
      HCLOUD_NETWORK_ROUTES_ENABLED: "F",
      HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK: "TRUE",
      HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL: "1m",
      HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE: "LEAST_CONNECTIONS",
    });
    assertEquals(ok.errors, []);
    assertEquals([
      ok.config.token,
      ok.config.networkRoutesEnabled,
      ok.config.loadBalancers.disablePublicNetwork,
    ], ["short", false, true]);
    assertEquals([ok.config.loadBalancers.healthCheckIntervalMs, ok.config.loadBalancers.algorithmType], [
      60_000,
      "least_connections",
    ]);
    assertEquals(ok.warnings, ["unrecognized token format, expected 64 characters"]);
    const bad = await readHcloudConfig({
      HCLOUD_ENDPOINT: "ftp://x",
      HCLOUD_DEBUG: "yes",
      HCLOUD_LOAD_BALANCERS_PRIVATE_SUBNET_IP_RANGE: "10.0.0.0",
      HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: "-1",
      HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE: "random",
      HCLOUD_LOAD_BALANCERS_LOCATION: "Fsn 1",
    });
    const text = bad.errors.join("\n");
    for (
      const part of [
        "HCLOUD_TOKEN (or HCLOUD_TOKEN_FILE) is required",
        'HCLOUD_ENDPOINT: "ftp://x"',
        'HCLOUD_DEBUG: "yes" is not a boolean',
        'HCLOUD_LOAD_BALANCERS_PRIVATE_SUBNET_IP_RANGE: "10.0.0.0" is not a CIDR',
        'HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES: "-1"',
        'HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE: "random"',
        'HCLOUD_LOAD_BALANCERS_LOCATION: "Fsn 1"',
      ]
    ) assert(text.includes(part), `missing ${part} in\n${text}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hcloud config: contradictory settings are errors naming them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const token = "a".repeat(64);
    await Deno.writeTextFile(`${dir}/token`, "b".repeat(64));
    const both = await readHcloudConfig({ HCLOUD_TOKEN: token, HCLOUD_TOKEN_FILE: `${dir}/token` });
    assertEquals(both.errors, [
      `HCLOUD_TOKEN and HCLOUD_TOKEN_FILE (${dir}/token) are both set and differ: set only one of them`,
    ]);
    assert(!both.errors.join().includes(token), "never the token itself");
    await Deno.writeTextFile(`${dir}/same`, `${token}\n`);
    assertEquals(
      (await readHcloudConfig({ HCLOUD_TOKEN: token, HCLOUD_TOKEN_FILE: `${dir}/same` })).errors,
      [],
    );
    const privateIp = await readHcloudConfig({
      HCLOUD_TOKEN: token,
      HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP: "true",
    });
    assertEquals(privateIp.errors, [
      "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP=true needs a network: set HCLOUD_NETWORK (private IPs live in a network)",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hcloud config: a token with a line break or inner whitespace is an error that does not show it", async () => {
  const token = "k".repeat(64);
  const { errors } = await readHcloudConfig({ HCLOUD_TOKEN: `${token}\n# rotated by ops` });
  assertEquals(errors.length, 1);
  assertEquals(errors[0].includes(token), false, errors[0]);
  assertEquals(errors[0].startsWith("HCLOUD_TOKEN: not a token: it contains whitespace"), true, errors[0]);
  // Surrounding whitespace (a Secret written from a file) is trimmed, not an error.
  const trimmed = await readHcloudConfig({ HCLOUD_TOKEN: `${token}\n` });
  assertEquals([trimmed.errors, trimmed.config.token], [[], token]);
});

Deno.test("hcloud config: the namespaces trusted with objects made outside the CCM", async () => {
  const read = async (v?: string) =>
    await readHcloudConfig({
      HCLOUD_TOKEN: "x".repeat(64),
      ...(v === undefined ? {} : { HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES: v }),
    });
  assertEquals(
    (await read()).config.loadBalancers.externalObjectsNamespaces,
    "*",
    "the official CCM's default",
  );
  assertEquals((await read("")).config.loadBalancers.externalObjectsNamespaces, []);
  assertEquals((await read("team-a, ingress")).config.loadBalancers.externalObjectsNamespaces, [
    "team-a",
    "ingress",
  ]);
  assertEquals((await read("Team_A")).errors, [
    'HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES: "Team_A" is not a namespace name',
  ]);
});

Deno.test("config: without HCLOUD_TOKEN(_FILE) the Syself chart's mounted Secret (key hcloud) gives the token", async () => {
  const dir = await Deno.makeTempDir();
  const none = await readHcloudConfig({}, dir);
  assertEquals(none.errors, ["HCLOUD_TOKEN (or HCLOUD_TOKEN_FILE) is required"]);
  await Deno.writeTextFile(`${dir}/hcloud`, `${"m".repeat(64)}\n`);
  const mounted = await readHcloudConfig({}, dir);
  assertEquals([mounted.errors, mounted.config.token, mounted.config.tokenFile], [
    [],
    "m".repeat(64),
    `${dir}/hcloud`,
  ]);
  // The variable, when set, is what counts (the mount is not read).
  const direct = await readHcloudConfig({ HCLOUD_TOKEN: "d".repeat(64) }, dir);
  assertEquals([direct.config.token, direct.config.tokenFile], ["d".repeat(64), undefined]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("config: a hostile file at the Syself mount (FIFO, folder, oversized) exits naming it, without reading it", async () => {
  // Whoever can place files where the Secret is mounted could otherwise hang the start (a FIFO
  // nobody writes) or fill the memory (a huge file): the mount passes the same guard as
  // HCLOUD_TOKEN_FILE, a `stat` before any read.
  const dir = await Deno.makeTempDir();
  const cases: [string, () => Promise<void>, RegExp][] = [
    ["FIFO", async () => {
      await new Deno.Command("mkfifo", { args: [`${dir}/hcloud`] }).output();
    }, /is not a regular file/],
    ["folder", () => Deno.mkdir(`${dir}/hcloud`), /is not a regular file/],
    [
      "oversized",
      () => Deno.writeTextFile(`${dir}/hcloud`, "m".repeat(5000)),
      /5000 bytes, more than the 4096/,
    ],
  ];
  for (const [what, make, expected] of cases) {
    await make();
    const { errors, config } = await readHcloudConfig({}, dir);
    assertEquals(errors.length, 1, what);
    assert(
      errors[0].startsWith(
        `HCLOUD_TOKEN (unset, so read from the Syself chart's Secret mount): cannot read ${dir}/hcloud`,
      ),
      errors[0],
    );
    assert(expected.test(errors[0]), `${what}: ${errors[0]}`);
    assertEquals(config.token || undefined, undefined, what);
    await Deno.remove(`${dir}/hcloud`, { recursive: true });
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("config: an empty token file is refused naming the file, not left to the API's 401", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/token`, "\n");
  const { errors } = await readHcloudConfig({ HCLOUD_TOKEN_FILE: `${dir}/token` }, dir);
  assertEquals(errors, [`HCLOUD_TOKEN_FILE: ${dir}/token is empty; it must hold the API token`]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("config: the firewall's name is taken as given, and refused when it cannot be one", async () => {
  const base = { HCLOUD_TOKEN: "x".repeat(64) };
  const ok = await readHcloudConfig({ ...base, HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes" });
  assertEquals([ok.errors, ok.config.loadBalancers.firewall], [[], "k8s-nodes"]);
  assertEquals((await readHcloudConfig(base)).config.loadBalancers.firewall, undefined, "off by default");
  for (const bad of ["a\nb", "x".repeat(129)]) {
    const { errors } = await readHcloudConfig({ ...base, HCLOUD_LOAD_BALANCERS_FIREWALL: bad });
    assertEquals(errors.length, 1);
    assert(errors[0].startsWith("HCLOUD_LOAD_BALANCERS_FIREWALL: "), errors[0]);
  }
});

Deno.test("config: the namespaces whose NodePort Services may open their ports: none unless named, only with a firewall", async () => {
  const base = { HCLOUD_TOKEN: "x".repeat(64), HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes" };
  const read = async (env: Record<string, string>) => await readHcloudConfig({ ...base, ...env });
  assertEquals(
    (await read({})).config.loadBalancers.firewallNodePortNamespaces,
    undefined,
    "none by default",
  );
  const named = await read({ HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "shop, admin" });
  assertEquals([named.errors, named.config.loadBalancers.firewallNodePortNamespaces], [[], [
    "shop",
    "admin",
  ]]);
  assertEquals(
    (await read({ HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "*" })).config.loadBalancers
      .firewallNodePortNamespaces,
    "*",
  );
  const bad = await read({ HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "shop,Evil\nNS" });
  assertEquals(bad.errors, [
    'HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "Evil\\nNS" is not a namespace name',
  ]);
  const alone = await readHcloudConfig({
    HCLOUD_TOKEN: "x".repeat(64),
    HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES: "shop",
  });
  assertEquals(alone.errors, [
    "HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES needs HCLOUD_LOAD_BALANCERS_FIREWALL: the NodePorts are opened in that firewall",
  ]);
});

Deno.test("hcloud config: a full server list daily, hourly while server labels or taints are copied to Nodes", async () => {
  const token = { HCLOUD_TOKEN: "x".repeat(64) };
  const period = async (env: Record<string, string>) =>
    (await readHcloudConfig({ ...token, ...env })).config.serverFullListPeriodMs;
  assertEquals(await period({}), 86_400_000);
  assertEquals(await period({ HCLOUD_INSTANCES_SERVER_LABELS: "team" }), 3_600_000);
  assertEquals(await period({ HCLOUD_INSTANCES_SERVER_TAINTS: "dedicated:NoExecute" }), 3_600_000);
  assertEquals(
    await period({ HCLOUD_INSTANCES_SERVER_LABELS: "team", HCLOUD_SERVER_FULL_LIST_PERIOD: "6h" }),
    21_600_000,
  );
  // A period of 0 is the `list` design in disguise (a full list at every refresh): refused, naming it.
  for (const zero of ["0", "0s"]) {
    assertEquals((await readHcloudConfig({ ...token, HCLOUD_SERVER_FULL_LIST_PERIOD: zero })).errors, [
      'HCLOUD_SERVER_FULL_LIST_PERIOD: "0" lists every server at every refresh; set HCLOUD_SERVER_REFRESH=list ' +
      "for that, or give a period (24h by default)",
    ]);
  }
});

Deno.test("config: a bad topology or taint pattern is refused naming its variable and value", async () => {
  const { errors } = await readHcloudConfig({
    HCLOUD_TOKEN: "t".repeat(64),
    HCLOUD_INSTANCES_TOPOLOGY: "datacenter",
    HCLOUD_INSTANCES_SERVER_TAINTS: "bad key:NoSchedule",
    HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS: "setup:Sometimes",
    HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS: "maybe",
  });
  for (
    const want of [
      'HCLOUD_INSTANCES_TOPOLOGY: "datacenter" is not one of legacy, location',
      'HCLOUD_INSTANCES_SERVER_TAINTS: "bad key" is not a label key',
      'HCLOUD_INSTANCES_SERVER_STARTUP_TAINTS: "setup:Sometimes": the effect is not one of',
      "HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS",
    ]
  ) assertEquals(errors.some((e) => e.includes(want)), true, `${want} in ${errors.join("; ")}`);
});
