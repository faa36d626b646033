import { assertEquals } from "./assert.ts";
import { kubeProxyHealthz } from "./node_endpoints.ts";

Deno.test("kube-proxy /healthz (KEP-3836): 503 on a Node being deleted or marked by the autoscaler", () => {
  assertEquals(kubeProxyHealthz({ metadata: { name: "a" } }), 200);
  assertEquals(
    kubeProxyHealthz({ metadata: { name: "a" }, spec: { taints: [{ key: "x", effect: "NoSchedule" }] } }),
    200,
  );
  assertEquals(
    kubeProxyHealthz({
      metadata: { name: "a" },
      spec: { taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }] },
    }),
    503,
  );
  assertEquals(kubeProxyHealthz({ metadata: { name: "a", deletionTimestamp: "2026-11-25T00:00:00Z" } }), 503);
  assertEquals(kubeProxyHealthz(undefined), 503, "a Node that is gone");
});
