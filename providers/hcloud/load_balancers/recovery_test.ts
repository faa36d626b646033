/**
 * Acto's recovery property (issue 60 item 4), against the simulator: a Service with good annotations
 * A, then one bad value B, then A again. B must cost zero cloud writes (every value is checked before
 * the first call), and A again must cost none either: the balancer is the one A made. Every annotation
 * the parser checks, from the parser's own tables, gets a value it refuses.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../testing/assert.ts";
import { K8S_NETWORK, startTestSim } from "../../../testing/sim_harness.ts";
import { applySeed } from "../../../hcloud_sim/control.ts";
import { providerOnSim } from "../../../testing/provider_on_sim.ts";
import { KNOWN_ANNOTATIONS, valueKind } from "./spec/mod.ts";
import { rootCause, TerminalError } from "../../errors.ts";

const P = "load-balancer.hetzner.cloud/";

/** A value each checked annotation refuses, from its kind in the parser's tables. */
function refused(): [string, string][] {
  const bad = {
    bool: "maybe",
    choice: "bogus",
    duration: "5x",
    integer: "-1",
    pattern: "not valid!",
    hostname: "-bad-.example",
  } as const;
  return KNOWN_ANNOTATIONS.flatMap((name) => {
    const kind = valueKind(name);
    return kind && kind in bad ? [[name, bad[kind as keyof typeof bad]] as [string, string]] : [];
  });
}

Deno.test("recovery: good annotations, one bad value, good again: the bad one costs no cloud write, and the balancer stays the one A made", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    applySeed(t.sim, K8S_NETWORK);
    const provider = await providerOnSim(
      t,
      { HCLOUD_NETWORK: "k8s" },
      "7b0d0c3e-0000-4000-8000-0000000ac70a",
    );
    const lbs = provider.loadBalancers!;
    const server = t.sim.addServer({
      name: "n1",
      location: "nbg1",
      labels: {},
      private_net: [{ network: "k8s" }],
    });
    const nodes: Node[] = [{ metadata: { name: "n1" }, spec: { providerID: `hcloud://${server.id}` } }];
    const good: Record<string, string> = {
      [`${P}location`]: "nbg1",
      [`${P}health-check-interval`]: "5s",
      [`${P}algorithm-type`]: "least_connections",
    };
    const svc = (annotations: Record<string, string>): Service => ({
      metadata: { name: "web", namespace: "shop", uid: "uid-web", annotations },
      spec: { type: "LoadBalancer", ports: [{ name: "p", port: 80, protocol: "TCP", nodePort: 30080 }] },
    });
    const ensure = (annotations: Record<string, string>) =>
      lbs.ensureLoadBalancer({ clusterName: "k", service: svc(annotations), nodes });
    await ensure(good);
    const balancer = () => JSON.stringify([...t.sim.world.loadBalancers.values()]);
    const afterA = balancer();
    const writes = (from: number) =>
      t.sim.audit.slice(from).filter((e) => e.method !== "GET").map((e) => e.route);
    const cases = refused();
    assert(cases.length > 25, `${cases.length} annotations`);
    for (const [name, value] of cases) {
      const before = t.sim.audit.length;
      let err: unknown;
      try {
        await ensure({ ...good, [`${P}${name}`]: value });
      } catch (e) {
        err = e;
      }
      assert(
        err !== undefined && rootCause(err) instanceof TerminalError,
        `${name}: "${value}" was accepted`,
      );
      assertEquals(writes(before), [], `${name}: "${value}" cost cloud writes`);
      assert(
        (err as Error).message.includes(name),
        `${name}: the message names it: ${(err as Error).message}`,
      );
      const back = t.sim.audit.length;
      await ensure(good);
      assertEquals(writes(back), [], `${name}: A again after B cost cloud writes`);
      assertEquals(balancer(), afterA, `${name}: the balancer is not the one A made`);
    }
  } finally {
    await t.finish();
  }
});

Deno.test("stale view: a Service deleted and made again under its name; the old one's late deletion never deletes the new one's balancer", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    const live = new Set<string>(["uid-1"]);
    const svc = (uid: string): Service => ({
      metadata: {
        name: "web",
        namespace: "shop",
        uid,
        annotations: { [`${P}location`]: "nbg1", [`${P}name`]: "shop-web" },
      },
      spec: { type: "LoadBalancer", ports: [{ name: "p", port: 80, protocol: "TCP", nodePort: 30080 }] },
    });
    const provider = await providerOnSim(t, {}, {
      clusterId: "7b0d0c3e-0000-4000-8000-00000000s7a1",
      services: () => [...live].map(svc),
    });
    const lbs = provider.loadBalancers!;
    const server = t.sim.addServer({ name: "n1", location: "nbg1", labels: {} });
    const nodes: Node[] = [{ metadata: { name: "n1" }, spec: { providerID: `hcloud://${server.id}` } }];
    await lbs.ensureLoadBalancer({ clusterName: "k", service: svc("uid-1"), nodes });
    const [made] = t.sim.world.loadBalancers.values();
    // The Service is deleted and made again (a new UID); the CCM syncs the new one first ...
    live.delete("uid-1");
    live.add("uid-2");
    await lbs.ensureLoadBalancer({ clusterName: "k", service: svc("uid-2"), nodes });
    assertEquals(
      made.labels["hcloud-ccm/service-uid"],
      "uid-2",
      "taken over: the same balancer, the same IP",
    );
    // ... and only then the old one's deletion, from a view that still had it.
    await lbs.ensureLoadBalancerDeleted("k", svc("uid-1"));
    assertEquals([...t.sim.world.loadBalancers.keys()], [made.id], "the new Service's balancer stays");
    assertEquals(t.sim.audit.filter((e) => e.route === "POST /load_balancers").length, 1, "never made twice");
  } finally {
    await t.finish();
  }
});
