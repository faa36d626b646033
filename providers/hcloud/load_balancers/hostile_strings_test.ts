/**
 * Security review Q1, as a property: whatever text a tenant writes into the annotations the parser
 * accepts as free text (a health-check path, a cookie name, a domain, status codes, a balancer's
 * name), the cluster-wide loops that list every balancer (the firewall keeper, drift repair, the
 * lost-balancer check, the orphan sweep) keep working, other tenants' balancers keep being made, and
 * the tenant's own balancer can still be changed and deleted. Against the simulator, from a seed
 * (`SEED=<n>` replays one).
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../../testing/assert.ts";
import { K8S_NETWORK, startTestSim } from "../../../testing/sim_harness.ts";
import { applySeed } from "../../../hcloud_sim/control.ts";
import { providerOnSim } from "../../../testing/provider_on_sim.ts";
import { pick, type Random, runSeed, seededRandom } from "../../../lib/random.ts";

const P = "load-balancer.hetzner.cloud/";
const CLUSTER = "7b0d0c3e-0000-4000-8000-0000000000q1";

/** Pieces that made (or could make) a text scanner read a string as JSON structure. */
const HOSTILE = [
  ":99999999999999999,",
  "[18446744073709551615]",
  ",-9007199254740993}",
  ":9.007199254740993e15,",
  ":",
  ",",
  "[",
  "]",
  "{",
  "}",
  "\\",
  '"',
  "99999999999999999",
  "1e400",
  "0",
];
const hostile = (r: Random, allowed: (c: string) => boolean, n = 8) => {
  let s = "";
  for (let i = 0; i < n; i++) {
    const piece = HOSTILE[pick(r, HOSTILE.length)];
    s += [...piece].filter(allowed).join("");
  }
  return s;
};
const printable = (c: string) => c >= "!" && c <= "~";
const token = (c: string) => /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/.test(c);

/** One tenant's annotations, each accepted by the parser, each full of number-like text. */
function hostileAnnotations(r: Random, i: number): Record<string, string> {
  const digits = "9".repeat(16 + pick(r, 8));
  return {
    [`${P}location`]: "nbg1",
    [`${P}name`]: `x${i}-${digits}`,
    [`${P}health-check-protocol`]: "http",
    // The first tenant writes the review's own path; the others random ones.
    [`${P}health-check-http-path`]: i === 0 ? "/x:99999999999999999," : "/" + hostile(r, printable),
    [`${P}health-check-http-domain`]: `${digits}.example`,
    [`${P}health-check-http-status-codes`]: ["2??", "3??", "200", "404"].slice(0, 1 + pick(r, 4)).join(","),
    [`${P}protocol`]: "http",
    [`${P}http-sticky-sessions`]: "true",
    [`${P}http-cookie-name`]: ("c" + hostile(r, token)).slice(0, 64),
  };
}

function svc(
  name: string,
  namespace: string,
  nodePort: number,
  annotations: Record<string, string>,
): Service {
  return {
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, annotations },
    spec: { type: "LoadBalancer", ports: [{ name: "p", port: 80, protocol: "TCP", nodePort }] },
  };
}

Deno.test("hostile strings: a tenant's annotation text never stops a cluster-wide loop or its own deletion (Q1)", async () => {
  const seed = runSeed();
  const r = seededRandom(seed);
  const why = `seed ${seed} (replay with SEED=${seed})`;
  const t = await startTestSim({ actionDurationMs: 0 });
  try {
    applySeed(t.sim, K8S_NETWORK);
    const provider = await providerOnSim(t, {
      HCLOUD_NETWORK: "k8s",
      HCLOUD_LOAD_BALANCERS_FIREWALL: "k8s-nodes",
    }, CLUSTER);
    const lbs = provider.loadBalancers!;
    const server = t.sim.addServer({
      name: "n1",
      location: "nbg1",
      labels: {},
      private_net: [{ network: "k8s" }],
    });
    const nodes: Node[] = [{ metadata: { name: "n1" }, spec: { providerID: `hcloud://${server.id}` } }];
    const ensure = (service: Service) => lbs.ensureLoadBalancer({ clusterName: "k", service, nodes });

    await ensure(svc("web", "good", 30080, { [`${P}location`]: "nbg1" }));
    const evil = Array.from(
      { length: 4 },
      (_, i) => svc(`e${i}`, "evil", 30100 + i, hostileAnnotations(r, i)),
    );
    for (const s of evil) await ensure(s);
    // What the tenant wrote reached the cloud as written (the balancer holds the hostile text).
    const paths = [...t.sim.world.loadBalancers.values()].flatMap((lb) =>
      lb.services.map((p) => p.health_check.http?.path ?? "")
    );
    for (const s of evil) {
      const path = s.metadata!.annotations![`${P}health-check-http-path`];
      assertEquals(paths.includes(path), true, `${why}: path ${path} in the cloud`);
    }

    // Every loop that lists every balancer of the cluster.
    assertEquals((await lbs.firewall!.sync()).refused, [], why);
    const drift = await lbs.inventory!.drift();
    assertEquals(drift!.owners.size, 5, why);
    assertEquals(drift!.drifted.size, 0, why);
    assertEquals((await lbs.inventory!.owners(5))?.size ?? 5, 5, why);
    const live = new Set(["uid-good-web", ...evil.map((s) => s.metadata!.uid!)]);
    assertEquals(await lbs.inventory!.sweepOrphans(live), 0, why);
    // Another tenant's new balancer is made, and opened in the firewall.
    await ensure(svc("api", "good", 30081, { [`${P}location`]: "nbg1" }));
    assertEquals((await lbs.firewall!.sync()).changed, true, why);

    // The tenant's own balancers change and go.
    const changed = structuredClone(evil[0]);
    delete changed.metadata!.annotations![`${P}health-check-http-path`];
    await ensure(changed);
    for (const s of evil) await lbs.ensureLoadBalancerDeleted("k", s);
    assertEquals(t.sim.world.loadBalancers.size, 2, `${why}: only the good tenant's two remain`);
    // A balancer whose Service is gone is swept even while hostile text sits on another.
    const again = svc("e9", "evil", 30109, hostileAnnotations(r, 9));
    await ensure(again);
    // Old enough to be swept (a younger one may still be getting its Service's finalizer).
    for (const id of t.sim.world.loadBalancers.keys()) t.sim.control.backdateLoadBalancer(id, 120_000);
    assertEquals(await lbs.inventory!.sweepOrphans(new Set(["uid-good-web", "uid-good-api"])), 1, why);
  } finally {
    await t.finish();
  }
});
