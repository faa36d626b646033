/**
 * Certificates for HTTPS load balancers: uploaded ones named by ID or name, or a managed
 * (Let's Encrypt) one created for the Service and found again by its UID label.
 *
 * Managed certificates have a lifecycle (HCCM #596, #709): a Service recreated under the same
 * `http-managed-certificate-name` takes over the certificate its predecessor left (same domains, its
 * Service gone) instead of failing on the name; the certificates a Service's balancer used are
 * deleted with it unless another balancer uses them; a failed issuance is a warning naming the domains.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { TerminalError } from "../../../errors.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import type { ActionWaiter, HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import type { ProviderWarning, TlsSecret } from "../../../provider.ts";
import { TlsCertificates } from "./tls_secrets.ts";
import { logger } from "../../../../lib/log.ts";
import { ExternalObjectConsent } from "../core/consent.ts";
import { type CertificateFacts, certificateOwnerProblem, type OwnerContext } from "./certificate_owner.ts";
import { identityLabels, madeForAnother, SERVICE_UID_LABEL as UID_LABEL } from "../core/labels.ts";
import { LB_ANNOTATION_PREFIX, TLS_SECRET_ANNOTATION } from "../../names.ts";
import type { ClusterFacts } from "../core/cluster_facts.ts";
type Certificate = Schemas["certificate"];

/** How long a certificate's labels read by ID are trusted, and how many are kept. */
const FACTS_TTL_MS = 10 * 60_000;
const FACTS_MAX = 512;

/** Resolves the certificate IDs a Service's HTTPS services use. */
export class LbCertificates {
  readonly #log = logger("hcloud");
  readonly #facts = new Map<number, { facts: CertificateFacts; at: number }>();
  #tls?: TlsCertificates;

  /** `facts`: the cluster's identity and Services (whose certificates are whose). */
  constructor(
    private readonly client: HcloudClient,
    private readonly actions: ActionWaiter,
    private readonly facts: ClusterFacts,
    private readonly consent: ExternalObjectConsent = new ExternalObjectConsent(),
  ) {}

  /**
   * IDs for `spec`'s HTTPS services and warnings about them: the Service-wide certificates (when a
   * port uses them, or a managed one is asked for: the official CCM makes it whatever the protocol)
   * and each port's own (`port-<n>-http-certificates`, or its `certificate-type: managed`, which is
   * the Service's managed certificate). Creates the managed certificate when it does not exist yet.
   */
  async resolve(
    service: Service,
    spec: LoadBalancerSpec,
    secrets?: ReadonlyMap<string, TlsSecret | undefined>,
  ): Promise<
    { ids: number[]; byPort: Map<number, number[]>; warnings: ProviderWarning[]; secrets: string[] }
  > {
    const warnings: ProviderWarning[] = [];
    const byPort = new Map<number, number[]>();
    const used: string[] = [];
    let managed: number[] | undefined;
    const managedIds = async () => managed ??= await this.#managedIds(service, spec, warnings);
    const namespace = service.metadata?.namespace ?? "default";
    const fromSecret = async (name: string, annotation: string) => {
      used.push(`${namespace}/${name}`);
      return [
        await this.tls.resolve(
          this.facts.clusterId(),
          `${namespace}/${name}`,
          secrets?.get(name),
          annotation,
          warnings,
        ),
      ];
    };
    for (const [port, own] of spec.ports) {
      if ((own.protocol ?? spec.protocol) !== "https") continue;
      if (own.tlsSecret) {
        byPort.set(port, await fromSecret(own.tlsSecret, `service.deno-ccm.io/port-${port}-tls-secret`));
      } else if (own.certificates) {
        const annotation = `service.deno-ccm.io/port-${port}-http-certificates`;
        byPort.set(port, await this.#uploaded(service, own.certificates, annotation));
      } else if (own.certificateType === "managed") byPort.set(port, await managedIds());
    }
    const wideUsed = (service.spec?.ports ?? []).some((p) =>
      (p.protocol ?? "TCP") === "TCP" && !byPort.has(p.port) &&
      (spec.ports.get(p.port)?.protocol ?? spec.protocol) === "https"
    );
    let ids: number[] = [];
    if (spec.certificateType === "managed") ids = await managedIds();
    else if (wideUsed && spec.tlsSecret) ids = await fromSecret(spec.tlsSecret, TLS_SECRET_ANNOTATION);
    else if (wideUsed) {
      if (spec.certificates.length === 0) {
        throw new TerminalError(
          "protocol https needs the annotation load-balancer.hetzner.cloud/http-certificates (IDs or names)",
        );
      }
      ids = await this.#uploaded(service, spec.certificates, `${LB_ANNOTATION_PREFIX}http-certificates`);
    }
    return { ids, byPort, warnings, secrets: used };
  }

  /** Whether `spec` asks for any certificate at all (so `resolve` has work to do). */
  static wanted(spec: LoadBalancerSpec): boolean {
    return spec.protocol === "https" || spec.certificateType === "managed" ||
      [...spec.ports.values()].some((p) => p.protocol === "https" || p.certificates || p.certificateType);
  }

  /** What the owner rule knows of the cluster (certificate_owner.ts). */
  get owners(): OwnerContext {
    return {
      clusterId: this.facts.clusterId(),
      serviceExists: (uid) => this.facts.serviceExists(uid),
      serviceName: (uid) => this.facts.serviceName(uid),
    };
  }

  /** Certificates uploaded from TLS Secrets (tls_secrets.ts). */
  get tls(): TlsCertificates {
    return this.#tls ??= new TlsCertificates(this.client);
  }

  /** The Service's managed certificate (made when missing); a failed issuance is a warning. */
  async #managedIds(
    service: Service,
    spec: LoadBalancerSpec,
    warnings: ProviderWarning[],
  ): Promise<number[]> {
    const certificate = await this.#managed(service, spec);
    if (certificate.status?.issuance === "failed") {
      warnings.push({
        reason: "ManagedCertificateFailed",
        message: `managed certificate "${certificate.name}" for ${certificate.domain_names.join(", ")} ` +
          `could not be issued: ${certificate.status.error?.message ?? "no reason given"}`,
      });
    }
    return [certificate.id];
  }

  /**
   * Uploaded certificates by ID or name, as `annotation` names them; each must be the Service's to
   * use: one a CCM made for another Service, Secret or cluster never is (certificate_owner.ts), one
   * made outside needs consent (consent.ts).
   */
  async #uploaded(service: Service, refs: string[], annotation: string): Promise<number[]> {
    const ids: number[] = [];
    for (const ref of refs) {
      const found = /^\d+$/.test(ref) ? await this.#byId(Number(ref)) : await this.#byName(ref);
      if (!found) {
        // Retried with backoff, as the official CCM does: uploading the certificate afterwards heals it.
        throw new Error(
          `annotation ${annotation}: certificate "${ref}" not found (retrying until it exists)`,
        );
      }
      const problem = certificateOwnerProblem(found, service, this.owners);
      if (problem) throw new TerminalError(`annotation ${annotation}: ${problem}`);
      this.consent.check(service, found, `certificate ${found.id} ("${found.name}")`);
      ids.push(found.id);
    }
    return ids;
  }

  /**
   * A certificate by ID, its labels remembered for ten minutes: who made a certificate is set when it
   * is made, so a Service resynced often costs one GET per certificate per ten minutes, not per sync.
   */
  async #byId(id: number): Promise<CertificateFacts | undefined> {
    const now = Date.now();
    const known = this.#facts.get(id);
    if (known && now - known.at < FACTS_TTL_MS) return known.facts;
    try {
      const { certificate } = await this.client.call(
        "get certificate",
        this.client.api.GET("/certificates/{id}", { params: { path: { id } } }),
      );
      const facts = { id: certificate.id, name: certificate.name, labels: certificate.labels };
      if (this.#facts.size >= FACTS_MAX) this.#facts.clear();
      this.#facts.set(id, { facts, at: now });
      return facts;
    } catch (err) {
      if (err instanceof CloudApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /**
   * Deletes the managed certificates created for the Service, once no balancer uses them (after its
   * balancer is deleted). A certificate still in use elsewhere is kept.
   */
  async deleteFor(service: Service): Promise<void> {
    for (const certificate of await this.#byUid(service.metadata!.uid!)) {
      if ((certificate.used_by ?? []).length > 0) {
        this.#log.info("keeping certificate {name}: still used by {n} load balancer(s)", {
          name: certificate.name,
          n: certificate.used_by.length,
        });
        continue;
      }
      try {
        await this.client.call(
          "delete certificate",
          this.client.api.DELETE("/certificates/{id}", { params: { path: { id: certificate.id } } }),
        );
        this.#log.info("deleted managed certificate {name} of a deleted Service", { name: certificate.name });
      } catch (err) {
        // Gone already, or taken into use since the list: nothing to do either way.
        if (err instanceof CloudApiError && (err.status === 404 || err.code === "certificate_in_use")) {
          continue;
        }
        throw err;
      }
    }
  }

  async #managed(service: Service, spec: LoadBalancerSpec): Promise<Certificate> {
    const uid = service.metadata!.uid!;
    const own = await this.#byUid(uid);
    if (own.length) return own[0];
    const name = spec.managedCertificateName ?? `ccm-managed-certificate-${uid}`;
    const existing = await this.#byName(name);
    if (existing) return await this.#adopt(existing, service, spec);
    const labels: Record<string, string> = { ...spec.labels, [UID_LABEL]: uid, ...identityLabels(service) };
    if (spec.acmeStaging) labels["HC-Use-Staging-CA"] = "true";
    const created = await this.client.call(
      "create certificate",
      this.client.api.POST("/certificates", {
        body: { name, type: "managed", domain_names: spec.managedCertificateDomains, labels },
      }),
    );
    if (created.action) {
      await this.actions.wait(created.action).catch((err) => {
        // A failed issuance is reported from the certificate's status below, not as a failed sync.
        if (!(err instanceof CloudApiError)) throw err;
      });
    }
    return (await this.#byUid(uid))[0] ?? created.certificate;
  }

  /**
   * Takes over a same-named managed certificate whose Service is gone, if it is for the same domains
   * and was made for this Service's namespace and name (when its labels say); one made outside
   * Kubernetes needs the namespace's consent (consent.ts).
   */
  async #adopt(existing: Certificate, service: Service, spec: LoadBalancerSpec): Promise<Certificate> {
    const uid = service.metadata!.uid!;
    const annotation = `${LB_ANNOTATION_PREFIX}http-managed-certificate-name`;
    const owner = existing.labels?.[UID_LABEL];
    const sameDomains = [...existing.domain_names].sort().join(",") ===
      [...spec.managedCertificateDomains].sort().join(",");
    if (existing.type !== "managed" || !sameDomains) {
      throw new TerminalError(
        `${annotation}: a ${existing.type} certificate named "${existing.name}" exists for ` +
          `${existing.domain_names.join(", ")}; choose another name or delete it`,
      );
    }
    if (owner && owner !== uid && this.facts.serviceExists(owner)) {
      throw new TerminalError(
        `${annotation}: certificate "${existing.name}" belongs to another Service (UID ${owner}); choose another name`,
      );
    }
    const other = madeForAnother(existing.labels, service);
    if (owner && other) {
      throw new TerminalError(
        `${annotation}: certificate "${existing.name}" was made for Service ${other}, which is gone; only a ` +
          "Service of that name takes it over. Choose another name",
      );
    }
    if (!owner) this.consent.check(service, existing, `certificate "${existing.name}"`);
    const updated = await this.client.call(
      "label certificate",
      this.client.api.PUT("/certificates/{id}", {
        params: { path: { id: existing.id } },
        body: { labels: { ...existing.labels, [UID_LABEL]: uid, ...identityLabels(service) } },
      }),
    );
    this.#log.info("took over managed certificate {name} left by a deleted Service", { name: existing.name });
    return updated.certificate;
  }

  async #byUid(uid: string): Promise<Certificate[]> {
    const found = await this.client.call(
      "find certificate",
      this.client.api.GET("/certificates", { params: { query: { label_selector: `${UID_LABEL}=${uid}` } } }),
    );
    return found.certificates;
  }

  async #byName(name: string): Promise<Certificate | undefined> {
    const found = await this.client.call(
      "find certificate",
      this.client.api.GET("/certificates", { params: { query: { name } } }),
    );
    return found.certificates[0];
  }
}
