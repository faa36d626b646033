/**
 * Certificates from the cluster's TLS Secrets (ours, opt-in; official CCM #984, #178): a Service names
 * a `kubernetes.io/tls` Secret of its namespace (`service.deno-ccm.io/tls-secret`, or per port); its
 * certificate is uploaded once as a Hetzner certificate labelled as this cluster's, for that Secret
 * and that content, and put on the Service's https services. A renewed Secret is a new upload and a
 * swap; the old certificate is deleted once no balancer uses it.
 *
 * What is checked before any upload: the Secret exists and carries the consent label (else the
 * controller offers nothing), it holds a PEM certificate and key, the key is the certificate's, and
 * the certificate is valid now. A Secret that fails is a `TlsSecretInvalid` warning naming the
 * Secret and why (never its content) and the certificate last uploaded from it stays in service.
 *
 * Calls: none when the content is known (an in-memory map of content → certificate, filled by the
 * first lookup after a start); a renewal is one lookup, one upload, the swap the sync makes anyway,
 * and one list plus one delete per old certificate. A crash between upload and swap leaks nothing:
 * the next sync finds the upload by its content label instead of uploading again, and cleans up.
 *
 * @module
 */
import { createHash, createPrivateKey, X509Certificate } from "node:crypto";
import type { HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import type { ProviderWarning, TlsSecret } from "../../../provider.ts";
import { TerminalError } from "../../../errors.ts";
import { logger } from "../../../../lib/log.ts";
import { CLUSTER_ID_LABEL } from "../core/labels.ts";
import { TLS_SECRET_LABEL } from "../../names.ts";
import { TLS_NAME_LABEL, TLS_NAMESPACE_LABEL, TLS_REF_LABEL } from "./certificate_owner.ts";

type Certificate = Schemas["certificate"];

export { TLS_REF_LABEL };
/** The content it was uploaded with: a hash of certificate and key. */
export const TLS_CONTENT_LABEL = "deno-ccm/tls-content";

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 40);

/** Why a Secret's content cannot be served, or undefined when it can (the key is never quoted). */
export function tlsSecretProblem(secret: TlsSecret, now = Date.now()): string | undefined {
  if (!secret.certificate.trim() || !secret.privateKey().trim()) {
    return "holds no certificate and key (a Secret of type kubernetes.io/tls with tls.crt and tls.key)";
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(secret.certificate);
  } catch {
    return "tls.crt is not a PEM certificate";
  }
  let key;
  try {
    key = createPrivateKey(secret.privateKey());
  } catch {
    return "tls.key is not a PEM private key";
  }
  if (!certificate.checkPrivateKey(key)) return "tls.key is not the key of the certificate in tls.crt";
  if (Date.parse(certificate.validTo) <= now) {
    return `tls.crt expired on ${new Date(certificate.validTo).toISOString()}`;
  }
  if (Date.parse(certificate.validFrom) > now) {
    return `tls.crt is not valid before ${new Date(certificate.validFrom).toISOString()}`;
  }
  return undefined;
}

/** See the module doc. */
export class TlsCertificates {
  readonly #log = logger("hcloud", "tls-secrets");
  /**
   * `refHash:content` → certificate ID, for certificates of this cluster: one upload per Secret and
   * content, so two Secrets with the same content never share (or delete) each other's certificate.
   */
  readonly #byContent = new Map<string, number>();
  /** Secret refs (hashes) whose older certificates may still exist → the content now served. */
  readonly #stale = new Map<string, string>();
  /** Secret refs (hashes) → the content whose older certificates are known gone (this process). */
  readonly #clean = new Map<string, string>();

  /** Certificates from Secrets, uploaded and deleted through `client`. */
  constructor(private readonly client: HcloudClient) {}

  /**
   * The certificate ID for `secret` (`namespace/name` is `ref`, `undefined` when none is offered),
   * uploading it when new; on bad content, the last one uploaded from it, with a warning.
   */
  async resolve(
    clusterId: string | undefined,
    ref: string,
    secret: TlsSecret | undefined,
    annotation: string,
    warnings: ProviderWarning[],
  ): Promise<number> {
    if (!clusterId) {
      throw new Error(`${annotation}: the cluster identity is not known yet (retrying)`);
    }
    const refHash = hash(ref);
    const problem = secret
      ? tlsSecretProblem(secret)
      : `not found, or not labelled ${TLS_SECRET_LABEL}=true (its owner's consent)`;
    if (!problem) {
      const content = hash(`${secret!.certificate}\n${secret!.privateKey()}`);
      const key = `${refHash}:${content}`;
      const known = this.#byContent.get(key) ?? await this.#find(clusterId, refHash, content);
      const id = known ?? await this.#upload(clusterId, ref, refHash, content, secret!);
      this.#byContent.set(key, id);
      // New content, or the first look since a start: older certificates of this Secret may be left.
      if (this.#clean.get(refHash) !== content) this.#stale.set(refHash, content);
      return id;
    }
    const running = (await this.#list(clusterId, refHash))
      .sort((a, b) => Date.parse(b.created) - Date.parse(a.created))[0];
    const why = `Secret ${ref}: ${problem}`;
    if (!running) {
      throw new TerminalError(`${annotation}: ${why}; no certificate was uploaded from it before`);
    }
    // Consent withdrawn (label removed, Secret deleted) is said apart from bad content: the certificate
    // stays while a Service of the namespace names the Secret (the namespace's own choice); it goes
    // once no Service does (docs/guides/tls-from-secrets.md).
    warnings.push(
      secret
        ? {
          reason: "TlsSecretInvalid",
          message: `${why}; the certificate uploaded from it before (${running.name}) stays in service`,
        }
        : {
          reason: "TlsSecretWithdrawn",
          message: `${why}; the certificate uploaded from it before (${running.name}) stays in service ` +
            `until no Service names the Secret (remove ${annotation} to take it off)`,
        },
    );
    return running.id;
  }

  /**
   * After a sync that put the certificates of `refs` (`namespace/name`) in place: deletes this
   * cluster's older certificates of those Secrets, when no balancer uses them any more. A Secret is
   * claimed while it is looked at, so syncs running side by side never list it twice.
   */
  async cleanUp(clusterId: string | undefined, refs: readonly string[]): Promise<void> {
    if (!clusterId) return;
    for (const refHash of new Set(refs.map(hash))) {
      const content = this.#stale.get(refHash);
      if (content === undefined) continue;
      this.#stale.delete(refHash);
      let busy = false;
      try {
        for (const certificate of await this.#list(clusterId, refHash)) {
          if (certificate.labels?.[TLS_CONTENT_LABEL] === content) continue;
          if ((certificate.used_by ?? []).length) {
            busy = true; // another Service naming the same Secret has not been synced yet
            continue;
          }
          await this.#delete(certificate);
        }
      } catch (err) {
        busy = true;
        throw err;
      } finally {
        // Still to do (unless a newer content took its place meanwhile), or done for this content.
        if (busy) {
          if (!this.#stale.has(refHash)) this.#stale.set(refHash, content);
        } else this.#clean.set(refHash, content);
      }
    }
  }

  /** Deletes this cluster's certificates of the Secrets `refs` that no balancer uses (a Service gone). */
  async sweep(clusterId: string | undefined, refs: string[]): Promise<void> {
    if (!clusterId) return;
    for (const ref of refs) {
      for (const certificate of await this.#list(clusterId, hash(ref))) {
        if ((certificate.used_by ?? []).length) continue;
        await this.#delete(certificate);
      }
    }
  }

  /**
   * Deletes this cluster's certificates uploaded from TLS Secrets that no balancer uses and that are
   * older than `minAgeMs` (a younger one may wait for its swap): what a Service left when it moved to
   * another Secret, or a crash left, while no process watched. One paginated list.
   */
  async sweepUnused(clusterId: string | undefined, minAgeMs: number, now = Date.now()): Promise<number> {
    if (!clusterId) return 0;
    const all = await this.client.listAll<Certificate, Certificate>(
      "list certificates",
      "certificates",
      (page) =>
        this.client.api.GET("/certificates", {
          params: {
            query: {
              label_selector: `${CLUSTER_ID_LABEL}=${clusterId},${TLS_REF_LABEL}`,
              page,
              per_page: 50,
            },
          },
        }),
      (c) => c,
    );
    let deleted = 0;
    for (const certificate of all) {
      if ((certificate.used_by ?? []).length || now - Date.parse(certificate.created) < minAgeMs) continue;
      await this.#delete(certificate);
      deleted++;
    }
    return deleted;
  }

  async #find(clusterId: string, refHash: string, content: string): Promise<number | undefined> {
    const found = await this.#list(clusterId, refHash, content);
    return found[0]?.id;
  }

  async #list(clusterId: string, refHash: string, content?: string): Promise<Certificate[]> {
    const selector = [`${CLUSTER_ID_LABEL}=${clusterId}`, `${TLS_REF_LABEL}=${refHash}`];
    if (content) selector.push(`${TLS_CONTENT_LABEL}=${content}`);
    const found = await this.client.call(
      "find certificate",
      this.client.api.GET("/certificates", { params: { query: { label_selector: selector.join(",") } } }),
    );
    return found.certificates;
  }

  async #upload(clusterId: string, ref: string, refHash: string, content: string, secret: TlsSecret) {
    // At most 62 characters: which cluster, which content, and as much of namespace-name as fits.
    const readable = ref.replace(/[^a-z0-9.-]/g, "-").slice(0, 40);
    const name = `tls-${clusterId.slice(0, 8)}-${content.slice(0, 8)}-${readable}`;
    const created = await this.client.call(
      "upload certificate",
      this.client.api.POST("/certificates", {
        body: {
          name,
          type: "uploaded",
          certificate: secret.certificate,
          private_key: secret.privateKey(),
          labels: {
            [CLUSTER_ID_LABEL]: clusterId,
            [TLS_REF_LABEL]: refHash,
            [TLS_CONTENT_LABEL]: content,
            ...secretLabels(ref),
          },
        },
      }),
    );
    this.#log.info("uploaded certificate {name} from Secret {ref}", { name, ref });
    return created.certificate.id;
  }

  /** Deletes `certificate` and forgets it; one gone already or in use again is left alone. */
  async #delete(certificate: Certificate): Promise<void> {
    for (const [k, id] of this.#byContent) if (id === certificate.id) this.#byContent.delete(k);
    try {
      await this.client.call(
        "delete certificate",
        this.client.api.DELETE("/certificates/{id}", { params: { path: { id: certificate.id } } }),
      );
      this.#log.info("deleted certificate {name}: replaced, or its Service is gone", {
        name: certificate.name,
      });
    } catch (err) {
      // Gone already, or taken into use since the list: nothing to do either way.
      if (err instanceof CloudApiError && (err.status === 404 || err.code === "certificate_in_use")) return;
      throw err;
    }
  }
}

/** The Secret's namespace and (when it fits a label value) name, so a refusal can say whose it is. */
function secretLabels(ref: string): Record<string, string> {
  const [namespace, name] = ref.split("/");
  const labels: Record<string, string> = { [TLS_NAMESPACE_LABEL]: namespace };
  if (name.length <= 63 && /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(name)) labels[TLS_NAME_LABEL] = name;
  return labels;
}
