/**
 * Consent for naming cloud objects made outside the CCM (security probe N4, N5, N12): a Service can
 * name an uploaded certificate, a Primary IP, or a balancer to adopt or attach to, and so reach what
 * another team (or another namespace's Service) made. Crossing that line needs the consent of someone
 * a namespace tenant is not: the object's owner, with the label `deno-ccm/namespace=<namespace>` on
 * the object in the cloud, or the operator, who lists the namespaces trusted with every such object in
 * `HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES` ("*", every namespace, is the default: the
 * official CCM's behaviour, which single-team clusters rely on; "" or a list for shared clusters).
 *
 * A refusal names the object, the namespace and both ways to consent, and changes nothing.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { TerminalError } from "../../../errors.ts";
import type { HcloudClient } from "../../../../hcloud_api/mod.ts";
import { CONSENT_LABEL } from "../../names.ts";

export { CONSENT_LABEL };

/** Who may name objects made outside the CCM (see the module doc). */
export class ExternalObjectConsent {
  constructor(readonly namespaces: "*" | string[] = "*") {}

  /** True when the Service's namespace may name any such object without the object's label. */
  trusted(service: Service): boolean {
    return this.namespaces === "*" || this.namespaces.includes(namespaceOf(service));
  }

  /** Throws unless `object` may be used by `service`; `what` names the object in the message. */
  check(service: Service, object: { labels?: Record<string, string> | null }, what: string): void {
    if (this.trusted(service)) return;
    const ns = namespaceOf(service);
    if (object.labels?.[CONSENT_LABEL] === ns) return;
    throw new TerminalError(
      `${what} was made outside this CCM and namespace ${ns} has no consent to use it: its owner can label it ` +
        `${CONSENT_LABEL}=${ns} in the cloud, or the operator list ${ns} in ` +
        "HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES; nothing was changed",
    );
  }

  /** Checks each Primary IP a new balancer would take (one GET each, only for untrusted namespaces). */
  async checkPrimaryIps(client: HcloudClient, service: Service, ids: number[]): Promise<void> {
    if (this.trusted(service)) return;
    for (const id of ids) {
      const { primary_ip } = await client.call(
        "get primary ip",
        client.api.GET("/primary_ips/{id}", { params: { path: { id } } }),
      );
      this.check(service, primary_ip, `Primary IP ${id} (${primary_ip.ip})`);
    }
  }
}

function namespaceOf(service: Service): string {
  return service.metadata?.namespace ?? "default";
}
