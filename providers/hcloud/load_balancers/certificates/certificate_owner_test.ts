import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../../../../testing/assert.ts";
import { certificateOwnerProblem } from "./certificate_owner.ts";

const evil: Service = { metadata: { name: "steal", namespace: "evil", uid: "uid-evil" } };
const shop: Service = { metadata: { name: "shop", namespace: "team-b", uid: "uid-shop" } };
const ctx = (live: string[]) => ({
  clusterId: "c1",
  serviceExists: (uid: string) => live.includes(uid),
  serviceName: (uid: string) => uid === "uid-shop" ? "team-b/shop" : undefined,
});

Deno.test("certificate owner: what a CCM made for one Service or Secret is refused to every other, whatever the consent (probe P1)", () => {
  const cert = (labels: Record<string, string>) => ({ id: 11, name: "c", labels });
  const why = (labels: Record<string, string>, service = evil, live = ["uid-shop"]) =>
    certificateOwnerProblem(cert(labels), service, ctx(live));
  // Made outside the CCM: consent.ts decides, not this rule.
  assertEquals(why({}), undefined);
  assertEquals(why({ "deno-ccm/namespace": "evil" }), undefined);
  // Uploaded from team-b's TLS Secret: only through the Secret, by nobody by ID (not even team-b).
  const tls = {
    "deno-ccm/tls-secret": "h",
    "deno-ccm/secret-namespace": "team-b",
    "deno-ccm/secret-name": "shop-tls",
  };
  assert(why(tls)!.includes("made by this CCM for Secret team-b/shop-tls"), why(tls));
  assert(why(tls, shop)!.includes("service.deno-ccm.io/tls-secret"), why(tls, shop));
  // A managed certificate made for team-b/shop: its own, nobody else's; the official CCM's by live UID.
  const managed = { "hcloud-ccm/service-uid": "uid-shop" };
  assertEquals(why(managed, shop), undefined);
  assert(why(managed)!.includes("made by a CCM for Service team-b/shop;"), why(managed));
  const identity = { ...managed, "deno-ccm/service-namespace": "team-b", "deno-ccm/service-name": "shop" };
  // Its Service gone: a recreated team-b/shop (new UID) may name it, evil still may not.
  const recreated: Service = { metadata: { ...shop.metadata, uid: "uid-new" } };
  assertEquals(why(identity, recreated, []), undefined);
  assert(why(identity, evil, [])!.includes("team-b/shop, which is gone"), why(identity, evil, []));
  // Another cluster's.
  assert(why({ "deno-ccm/cluster-id": "c2" }, shop)!.includes("another cluster"));
});
