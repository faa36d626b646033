/**
 * A Service is read once per version: the calls one sync of the service controller makes (its
 * selection twice, its TLS Secrets, the name, ensure) parse it once; a new version, and an object
 * edited in place, are read again.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../../testing/assert.ts";
import { startTestSim } from "../../../../testing/sim_harness.ts";
import { providerOnSim } from "../../../../testing/provider_on_sim.ts";
import { ServiceReader } from "./request.ts";
import { rootCause, TerminalError } from "../../../errors.ts";

const P = "load-balancer.hetzner.cloud/";

function svc(annotations: Record<string, string>): Service {
  return {
    metadata: { name: "web", namespace: "shop", uid: "uid-web", annotations },
    spec: { type: "LoadBalancer", ports: [{ name: "p", port: 443, protocol: "TCP", nodePort: 30443 }] },
  };
}

Deno.test("service request: one sync's calls parse the Service once; a new version or an in-place edit is read again", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    const provider = await providerOnSim(t, { HCLOUD_LOAD_BALANCERS_TLS_SECRETS: "true" }, "cluster-1");
    const lbs = provider.loadBalancers!;
    const server = t.sim.addServer({ name: "n1", location: "nbg1", labels: {} });
    const nodes: Node[] = [{
      metadata: { name: "n1", labels: { pool: "edge" } },
      spec: { providerID: `hcloud://${server.id}` },
    }];
    const service = svc({ [`${P}location`]: "nbg1", [`${P}node-selector`]: "pool=edge" });
    // What the service controller asks in one sync, in its order.
    const selected = lbs.nodeTargets!.selected(service, nodes);
    assertEquals([...selected ?? []], ["n1"]);
    assertEquals(lbs.tlsSecrets!.referenced(service), []);
    const result = await lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });
    assertEquals(result.ingress.length, 2, "served");
    lbs.nodeTargets!.selected(service, nodes);
    lbs.getLoadBalancerName("k", service);
    await lbs.updateLoadBalancer({ clusterName: "k", service, nodes });
    assertEquals(provider.hcloudLoadBalancers!.reader.parses, 1, "one version, one parse");

    // The informer hands a new object for a new version: it is read once more.
    const next = structuredClone(service);
    next.metadata!.annotations![`${P}node-selector`] = "pool=core";
    assertEquals(lbs.nodeTargets!.selected(next, nodes)?.size, 0);
    await lbs.ensureLoadBalancer({ clusterName: "k", service: next, nodes });
    assertEquals(provider.hcloudLoadBalancers!.reader.parses, 2);

    // An object edited in place (which the contract forbids) is never served stale.
    next.metadata!.annotations![`${P}node-selector`] = "pool=edge";
    assertEquals([...lbs.nodeTargets!.selected(next, nodes) ?? []], ["n1"]);
    assertEquals(provider.hcloudLoadBalancers!.reader.parses, 3);
  } finally {
    await t.finish();
  }
});

Deno.test("service request: a refused value is in the read once and ends the sync with its annotation named", () => {
  const reader = new ServiceReader({
    enabled: true,
    disablePrivateIngress: false,
    usePrivateIp: false,
    disableIpv6: false,
  }, () => false);
  const service = svc({ [`${P}use-private-ip`]: "true", [`${P}health-check-retries`]: "many" });
  const first = reader.read(service);
  assertEquals([...first.invalid].sort(), ["health-check-retries", "use-private-ip"]);
  assert(first.errors.some((e) => e.includes(`${P}use-private-ip needs a network`)), first.errors.join());
  // Read again: the same answer, not a second parse adding the network problem twice.
  assertEquals(reader.read(service).errors, first.errors);
  assertEquals(reader.parses, 1);
});

Deno.test("service request: ensure refuses a Service whose annotation was refused, naming it, and creates nothing", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    const provider = await providerOnSim(t, {}, "cluster-1");
    const err = await provider.loadBalancers!.ensureLoadBalancer({
      clusterName: "k",
      service: svc({ [`${P}location`]: "nbg1", [`${P}use-private-ip`]: "true" }),
      nodes: [],
    }).catch((e) => e);
    assert(rootCause(err) instanceof TerminalError);
    assert(
      String(err.message).includes("use-private-ip needs a network (HCLOUD_NETWORK is not set)"),
      err.message,
    );
    assertEquals(t.sim.world.loadBalancers.size, 0);
  } finally {
    await t.finish();
  }
});
