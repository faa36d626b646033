/**
 * Certificates for HTTPS load balancers: uploaded ones named by ID or name, or a managed
 * (Let's Encrypt) one created for the Service and found again by its UID label.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { TerminalError } from "../errors.ts";
import type { HcloudClient } from "./client.ts";
import type { ActionWaiter } from "./action_waiter.ts";
import type { LoadBalancerSpec } from "./lb_annotations.ts";

const UID_LABEL = "hcloud-ccm/service-uid";

/** Resolves the certificate IDs a Service's HTTPS services use. */
export class LbCertificates {
  constructor(private readonly client: HcloudClient, private readonly actions: ActionWaiter) {}

  /** IDs for `spec`; creates the managed certificate when it does not exist yet. */
  async resolve(service: Service, spec: LoadBalancerSpec): Promise<number[]> {
    const api = this.client.api;
    if (spec.certificateType === "managed") {
      const uid = service.metadata!.uid!;
      const found = await this.client.call(
        "find certificate",
        api.GET("/certificates", {
          params: { query: { label_selector: `${UID_LABEL}=${uid}` } },
        }),
      );
      if (found.certificates.length) return [found.certificates[0].id];
      const labels: Record<string, string> = { [UID_LABEL]: uid };
      if (
        service.metadata?.annotations
          ?.["load-balancer.hetzner.cloud/http-managed-certificate-acme-staging"] === "true"
      ) {
        labels["HC-Use-Staging-CA"] = "true";
      }
      const created = await this.client.call(
        "create certificate",
        api.POST("/certificates", {
          body: {
            name: spec.managedCertificateName ?? `ccm-managed-certificate-${uid}`,
            type: "managed",
            domain_names: spec.managedCertificateDomains,
            labels,
          },
        }),
      );
      if (created.action) await this.actions.wait(created.action);
      return [created.certificate.id];
    }
    if (spec.certificates.length === 0) {
      throw new TerminalError(
        "protocol https needs the annotation load-balancer.hetzner.cloud/http-certificates (IDs or names)",
      );
    }
    const ids: number[] = [];
    for (const ref of spec.certificates) {
      if (/^\d+$/.test(ref)) {
        ids.push(Number(ref));
        continue;
      }
      const found = await this.client.call(
        "find certificate",
        api.GET("/certificates", { params: { query: { name: ref } } }),
      );
      if (!found.certificates.length) {
        // Retried with backoff, as the official CCM does: uploading the certificate afterwards heals it.
        throw new Error(
          `annotation load-balancer.hetzner.cloud/http-certificates: certificate "${ref}" not found ` +
            "(retrying until it exists)",
        );
      }
      ids.push(found.certificates[0].id);
    }
    return ids;
  }
}
