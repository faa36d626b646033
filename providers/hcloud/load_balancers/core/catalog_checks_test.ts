/**
 * `HCLOUD_LOAD_BALANCERS_TYPE` (the operator's default type): a value no type name could be is refused
 * at start (exit 2), escaped; a well-formed type the project does not offer is refused before any cloud
 * write, naming the variable and the value; a Service's own `type` annotation still wins; the type
 * catalog is read at most once an hour, and only by a sync.
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../../testing/assert.ts";
import { startTestSim } from "../../../../testing/sim_harness.ts";
import { providerOnSim } from "../../../../testing/provider_on_sim.ts";
import { readHcloudConfig } from "../../mod.ts";
import { rootCause, TerminalError } from "../../../errors.ts";

const P = "load-balancer.hetzner.cloud/";

function svc(name: string, annotations: Record<string, string> = {}): Service {
  return {
    metadata: {
      name,
      namespace: "default",
      uid: `uid-${name}`,
      annotations: { [`${P}location`]: "nbg1", ...annotations },
    },
    spec: { type: "LoadBalancer", ports: [{ name: "p", port: 80, protocol: "TCP", nodePort: 30080 }] },
  };
}

Deno.test("HCLOUD_LOAD_BALANCERS_TYPE: an unknown type is refused naming the variable and changes nothing; the annotation wins; the catalog is read once", async () => {
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    const { errors } = await readHcloudConfig({
      HCLOUD_TOKEN: "t".repeat(64),
      HCLOUD_LOAD_BALANCERS_TYPE: "lb\u0000x",
    });
    assertEquals(errors, ['HCLOUD_LOAD_BALANCERS_TYPE: "lb\\u0000x" is not a load balancer type name']);
    const provider = await providerOnSim(t, { HCLOUD_LOAD_BALANCERS_TYPE: "lb99" }, "cluster-1");
    const lbs = provider.loadBalancers!;
    const server = t.sim.addServer({ name: "n1", location: "nbg1" });
    const nodes: Node[] = [{ metadata: { name: "n1" }, spec: { providerID: `hcloud://${server.id}` } }];
    const writes = () => t.sim.audit.filter((e) => e.method !== "GET").length;
    const before = writes();
    const err = await lbs.ensureLoadBalancer({ clusterName: "k", service: svc("web"), nodes }).catch((e) =>
      e
    );
    assert(rootCause(err) instanceof TerminalError, String(err));
    assert(
      err.message.includes('"lb99" is not a known load balancer type (or set by HCLOUD_LOAD_BALANCERS_TYPE)'),
      err.message,
    );
    assertEquals(writes(), before, "nothing written");
    assertEquals(t.sim.world.loadBalancers.size, 0);
    // A Service naming a type the project offers is served with it.
    await lbs.ensureLoadBalancer({ clusterName: "k", service: svc("api", { [`${P}type`]: "lb21" }), nodes });
    assertEquals([...t.sim.world.loadBalancers.values()].map((lb) => lb.load_balancer_type.name), ["lb21"]);
    // Both syncs read the catalog (types and locations) once between them; nothing reads it otherwise.
    assertEquals(t.sim.count(/^GET \/load_balancer_types$/), 1);
  } finally {
    await t.finish();
  }
});
