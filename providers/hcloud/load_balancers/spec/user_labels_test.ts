import { assertEquals } from "../../../../testing/assert.ts";
import { MAX_SERVICE_LABELS, parseUserLabels, userLabelsFor } from "./user_labels.ts";

const A = "service.deno-ccm.io/load-balancer-labels";

Deno.test("user labels: key=value lists with Hetzner's label syntax", () => {
  assertEquals(parseUserLabels("team=web, cost-center=42,example.com/tier=gold,empty=", "X"), {
    labels: { team: "web", "cost-center": "42", "example.com/tier": "gold", empty: "" },
    errors: [],
  });
  assertEquals(parseUserLabels(undefined, "X"), { labels: {}, errors: [] });
  assertEquals(parseUserLabels("novalue,-bad=1,ok=no spaces", "X").errors, [
    'X: "novalue" is not key=value',
    'X: "-bad=1": the key is not a valid label key',
    'X: "ok=no spaces": the value is not a valid label value',
  ]);
});

Deno.test("user labels: no source may set the CCM's ownership or consent labels; the operator's win; a Service sets few", () => {
  for (
    const key of ["hcloud-ccm/service-uid", "deno-ccm/cluster-id", "deno-ccm/namespace", "deno-ccm/lb-target"]
  ) {
    const own = userLabelsFor({ [A]: `${key}=x` }, {});
    assertEquals(own.labels, {});
    assertEquals(own.errors, [
      `annotation ${A}: "${key}=x": keys under hcloud-ccm/ and deno-ccm/ are the CCM's`,
    ]);
    assertEquals(parseUserLabels(`${key}=x`, "HCLOUD_LOAD_BALANCERS_LABELS").errors.length, 1);
  }
  assertEquals(userLabelsFor({ [A]: "team=mine,app=web" }, { team: "platform" }).labels, {
    team: "platform",
    app: "web",
  });
  const many = Array.from({ length: MAX_SERVICE_LABELS + 1 }, (_, i) => `k${i}=v`).join(",");
  assertEquals(userLabelsFor({ [A]: many }, {}).errors, [
    `annotation ${A}: ${MAX_SERVICE_LABELS + 1} labels; at most 10`,
  ]);
});
