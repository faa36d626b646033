import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../../testing/assert.ts";
import { parseLoadBalancerSpec } from "../spec/mod.ts";
import type { LoadBalancerDefaults } from "../spec/mod.ts";
import type { DesiredService } from "../core/desired.ts";
import type { components } from "../../../../hcloud_api/mod.ts";
import { sharedAlive } from "./shared.ts";
import {
  otherMembers,
  planJoin,
  planLeave,
  portOwners,
  settingsDigest,
  sharedLabels,
  sharedName,
} from "./shared_record.ts";
import { shareErrors } from "../spec/mod.ts";

type LB = components["schemas"]["load_balancer"];
const DEFAULTS: LoadBalancerDefaults = {
  enabled: true,
  disablePrivateIngress: false,
  usePrivateIp: false,
  disableIpv6: false,
};
const SEL = "deno-ccm/lb-target=c1";
const TARGET = { selector: SEL, usePrivateIp: false };

function svc(port: number, destination = 30000 + port): DesiredService {
  return {
    listen_port: port,
    destination_port: destination,
    protocol: "tcp",
    proxyprotocol: false,
    health_check: { protocol: "tcp", port: destination, interval: 15, timeout: 10, retries: 3 },
  } as DesiredService;
}

/** A shared balancer serving `owned` (port → owner name), with the cluster's target. */
function lb(owned: Record<number, string | undefined>, target = true): LB {
  const ports = Object.keys(owned).map(Number);
  const labels: Record<string, string> = sharedLabels({}, {
    clusterId: "c1",
    namespace: "shop",
    key: "web",
    digest: "d",
    name: "x",
  }, []);
  for (const [port, owner] of Object.entries(owned)) if (owner) labels[`deno-ccm/port-${port}`] = owner;
  return {
    id: 7,
    name: "shop-web",
    labels,
    services: ports.map((p) => svc(p)),
    targets: target ? [{ type: "label_selector", label_selector: { selector: SEL } }] : [],
  } as unknown as LB;
}

const kinds = (actions: { kind: string }[]) => actions.map((a) => a.kind);

Deno.test("shared record: ports are owned by the Service their label names", () => {
  const b = lb({ 80: "a", 443: "b", 9000: undefined });
  assertEquals([...portOwners(b.labels)], [[80, "a"], [443, "b"]]);
  assertEquals(otherMembers(b, "a"), ["b"]);
});

Deno.test("shared join: the first join claims, then adds its ports; nothing of others is touched", () => {
  const plan = planJoin(lb({ 80: "a" }), "b", [svc(443), svc(8443)], TARGET);
  assertEquals(plan.taken, []);
  assertEquals(plan.claim?.["deno-ccm/port-443"], "b");
  assertEquals(plan.claim?.["deno-ccm/port-8443"], "b");
  assertEquals(plan.claim?.["deno-ccm/port-80"], "a", "the other member's claim stays");
  assertEquals(kinds(plan.actions), ["add_service", "add_service"]);
  assertEquals(plan.release, undefined);
});

Deno.test("shared join: a port another member owns refuses the whole join", () => {
  const plan = planJoin(lb({ 80: "a" }), "b", [svc(443), svc(80)], TARGET);
  assertEquals(plan.taken, [{ port: 80, owner: "a" }]);
  assertEquals(plan.actions, []);
  assertEquals(plan.claim, undefined);
});

Deno.test("shared join: in steady state nothing is written", () => {
  const plan = planJoin(lb({ 80: "a", 443: "b" }), "b", [svc(443)], TARGET);
  assertEquals(plan, { taken: [], claim: undefined, actions: [], release: undefined });
});

Deno.test("shared join: a port given up is removed before its claim; an unowned port is removed", () => {
  const plan = planJoin(lb({ 80: "a", 443: "b", 8443: "b", 9000: undefined }), "b", [svc(443)], TARGET);
  assertEquals(plan.claim, undefined);
  assertEquals(plan.actions, [
    { kind: "delete_service", listenPort: 8443 },
    { kind: "delete_service", listenPort: 9000 },
  ]);
  assert(plan.release && !("deno-ccm/port-8443" in plan.release), "the claim goes after the port");
  assertEquals(plan.release?.["deno-ccm/port-80"], "a");
});

Deno.test("shared join: a claim whose port is missing (a crash between the writes) is completed", () => {
  const b = lb({ 80: "a" });
  b.labels!["deno-ccm/port-443"] = "b";
  const plan = planJoin(b, "b", [svc(443)], TARGET);
  assertEquals(plan.claim, undefined);
  assertEquals(kinds(plan.actions), ["add_service"]);
});

Deno.test("shared join: a changed port is updated; a missing target is added", () => {
  const plan = planJoin(lb({ 443: "b" }, false), "b", [svc(443, 31999)], TARGET);
  assertEquals(kinds(plan.actions), ["update_service", "add_target"]);
});

Deno.test("shared leave: the last member deletes the balancer; others take only their ports", () => {
  assertEquals(planLeave(lb({ 80: "a" }), "a"), { mine: true, deleteBalancer: true, actions: [] });
  const leave = planLeave(lb({ 80: "a", 443: "b", 8443: "b" }), "b");
  assertEquals(leave.deleteBalancer, false);
  assertEquals(leave.actions, [
    { kind: "delete_service", listenPort: 443 },
    { kind: "delete_service", listenPort: 8443 },
  ]);
  assertEquals(leave.labels?.["deno-ccm/port-80"], "a");
  assert(!("deno-ccm/port-443" in leave.labels!), "its claims go");
  assertEquals(planLeave(lb({ 80: "a" }), "c"), { mine: false, deleteBalancer: false, actions: [] });
});

Deno.test("shared leave: a claim without its port (a crash) is dropped without a port call", () => {
  const b = lb({ 80: "a" });
  b.labels!["deno-ccm/port-443"] = "b";
  const leave = planLeave(b, "b");
  assertEquals(leave.actions, []);
  assert(!("deno-ccm/port-443" in leave.labels!));
});

function service(annotations: Record<string, string>): Service {
  return {
    metadata: { name: "a", namespace: "shop", uid: "u", annotations },
    spec: { type: "LoadBalancer", ports: [{ port: 80, nodePort: 30080 }] },
  } as Service;
}

Deno.test("share key: bad keys and settings that cannot be shared are refused with the field", () => {
  const present = (names: string[]) => (n: string) => names.includes(n);
  assertEquals(shareErrors("web", present([])), []);
  assert(shareErrors("Web", present([]))[0].includes('"Web" is not a valid share key'));
  assert(shareErrors("a".repeat(41), present([])).length === 1);
  const clash = shareErrors("web", present(["node-selector", "attach-to"]));
  assert(
    clash[0].includes("load-balancer.hetzner.cloud/attach-to, load-balancer.hetzner.cloud/node-selector"),
  );
  const parsed = parseLoadBalancerSpec(
    service({
      "service.deno-ccm.io/load-balancer-share": "web",
      "load-balancer.hetzner.cloud/node-selector": "a=b",
    }),
    DEFAULTS,
  );
  assert(parsed.errors.some((e) => e.includes("node-selector cannot be set")), parsed.errors.join());
  assertEquals(parsed.spec.share, "web");
});

Deno.test("share settings: the digest follows the settings of the whole balancer only", async () => {
  const P = "load-balancer.hetzner.cloud/";
  const S = "service.deno-ccm.io/load-balancer-share";
  const digest = async (a: Record<string, string>) =>
    await settingsDigest(parseLoadBalancerSpec(service({ [S]: "web", ...a }), DEFAULTS).spec);
  const base = await digest({});
  assertEquals(await digest({ [`${P}protocol`]: "http", [`${P}health-check-port`]: "1" }), base, "per port");
  assert(await digest({ [`${P}type`]: "lb21" }) !== base, "type");
  assert(await digest({ [`${P}location`]: "nbg1" }) !== base, "location");
  assert(await digest({ [`${P}algorithm-type`]: "least_connections" }) !== base, "algorithm");
  assertEquals(base.length, 16);
});

Deno.test("shared name: readable, unique per cluster, namespace and key, within Hetzner's 63 characters", () => {
  const name = sharedName("shop", "web", "c1");
  assert(/^shop-web-[0-9a-f]{10}$/.test(name), name);
  assertEquals(sharedName("shop", "web", "c1"), name, "the same on every run");
  // Probe P3: namespace a with key b-c and namespace a-b with key c no longer meet on one name.
  assert(sharedName("a", "b-c", "c1") !== sharedName("a-b", "c", "c1"));
  assert(sharedName("shop", "web", "c2") !== name, "another cluster, another name");
  const long = sharedName("n".repeat(63), "k".repeat(40), "c1");
  assertEquals(long.length, 63);
  assert(long.includes(`-${"k".repeat(40)}-`));
  assert(long !== sharedName(`${"n".repeat(62)}m`, "k".repeat(40), "c1"), "different namespaces differ");
});

Deno.test("shared orphan: a shared balancer is alive while a live Service of its namespace naming its key owns a port", () => {
  const labels = lb({ 80: "a", 443: "b" }).labels!;
  const svc = (name: string, uid: string, key: string | undefined, namespace = "shop") =>
    ({
      metadata: {
        name,
        namespace,
        uid,
        annotations: key ? { "service.deno-ccm.io/load-balancer-share": key } : {},
      },
    }) as Service;
  const live = new Set(["u-a", "u-b", "u-x"]);
  assert(sharedAlive(labels, [svc("a", "u-a", "web")], live));
  assert(!sharedAlive(labels, [svc("a", "u-gone", "web")], live), "not live (being deleted, or gone)");
  assert(!sharedAlive(labels, [svc("a", "u-a", "api")], live), "it names another key now");
  assert(!sharedAlive(labels, [svc("a", "u-a", "web", "other")], live), "another namespace's a");
  assert(!sharedAlive(labels, [svc("x", "u-x", "web")], live), "a Service that owns no port");
});

Deno.test("shared join: the cluster's target follows use-private-ip; another target is removed", () => {
  const b = lb({ 443: "b" });
  b.targets.push({ type: "server", server: { id: 9 } } as LB["targets"][number]);
  const plan = planJoin(b, "b", [svc(443)], { selector: SEL, usePrivateIp: true });
  assertEquals(kinds(plan.actions), ["remove_target", "add_target", "remove_target"]);
});
