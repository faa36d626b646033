import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../../../testing/assert.ts";
import { rivalClaim } from "./lookup.ts";

function svc(
  name: string,
  uid: string,
  created: string,
  options: { lbName?: string; served?: boolean; type?: string } = {},
): Service {
  return {
    metadata: {
      name,
      namespace: "ns",
      uid,
      creationTimestamp: created,
      annotations: options.lbName ? { "load-balancer.hetzner.cloud/name": options.lbName } : {},
    },
    spec: { type: options.type ?? "LoadBalancer" },
    status: { loadBalancer: { ingress: options.served ? [{ ip: "198.51.100.1" }] : [] } },
  };
}

Deno.test("rival claims: a UID-derived name is its Service's; then served, then older, then namespace/name", () => {
  const victim = svc("victim", "1111-2222", "2026-01-02T00:00:00Z");
  const squatter = svc("evil", "9999", "2026-01-01T00:00:00Z", { lbName: "a11112222" });
  // The older squatter names the victim's default name: refused; the victim is never refused for it.
  assertEquals(rivalClaim("a11112222", squatter, [victim, squatter])?.who, "ns/victim");
  assertEquals(rivalClaim("a11112222", victim, [victim, squatter]), undefined);

  const old = svc("old", "3", "2026-01-01T00:00:00Z", { lbName: "web" });
  const young = svc("young", "4", "2026-01-05T00:00:00Z", { lbName: "web" });
  assertEquals(rivalClaim("web", young, [old, young])?.who, "ns/old");
  assertEquals(rivalClaim("web", old, [old, young]), undefined);
  // Having been served under the name beats age.
  const servedYoung = svc("young", "4", "2026-01-05T00:00:00Z", { lbName: "web", served: true });
  assertEquals(rivalClaim("web", old, [old, servedYoung])?.who, "ns/young");
  assertEquals(rivalClaim("web", servedYoung, [old, servedYoung]), undefined);
  assertEquals(
    rivalClaim("web", young, [old, young])?.why,
    "it is older: created 2026-01-01T00:00:00Z, " +
      "this Service 2026-01-05T00:00:00Z",
  );
  // Same second: the first by namespace/name, whichever UID is lower, so that exactly one of the two
  // may proceed and the same one on every run (UIDs are random).
  for (const [uidA, uidB] of [["5", "6"], ["6", "5"]]) {
    const twinA = svc("a", uidA, "2026-01-01T00:00:00Z", { lbName: "twin" });
    const twinB = svc("b", uidB, "2026-01-01T00:00:00Z", { lbName: "twin" });
    const claim = rivalClaim("twin", twinB, [twinA, twinB]);
    assertEquals(claim?.who, "ns/a");
    assertEquals(claim?.why.includes("a tie goes to the first by namespace/name"), true, claim?.why);
    assertEquals(rivalClaim("twin", twinA, [twinA, twinB]), undefined);
  }
  // A Service that is no longer a LoadBalancer claims nothing.
  const gone = svc("old", "3", "2026-01-01T00:00:00Z", { lbName: "web", type: "ClusterIP" });
  assertEquals(rivalClaim("web", young, [gone, young]), undefined);
});
