/**
 * The Service most end-to-end tests start from: type LoadBalancer in `default`, located in fsn1 (the
 * simulator's servers are there), selecting `app=<name>`, serving TCP port 80 unless told otherwise.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";

/** A LoadBalancer Service named `name` with `annotations` (after the location) and `spec` over the defaults. */
export function lbService(
  name: string,
  annotations: Record<string, string> = {},
  spec: Partial<NonNullable<Service["spec"]>> = {},
): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace: "default",
      annotations: { "load-balancer.hetzner.cloud/location": "fsn1", ...annotations },
    },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: [{ name: "http", port: 80, protocol: "TCP" }],
      ...spec,
    },
  };
}
