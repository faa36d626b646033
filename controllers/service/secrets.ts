/**
 * The TLS Secrets balancers serve certificates from (a provider's `tlsSecrets` capability): only
 * Secrets carrying the provider's label are watched (a label selector, so the cluster's other Secrets
 * are neither listed nor held in memory), cut to the certificate and key as they arrive. A Service is
 * synced again when a Secret it names appears, changes or goes; what it names is the provider's
 * to say. No cloud call here: the content goes to the provider with the Service's next sync.
 *
 * @module
 */
import { missingPermission } from "../../kube/errors.ts";
import type { Secret, Service } from "kubernetes-types/core/v1.d.ts";
import type { InformerFactory } from "../../kube/informer_factory.ts";
import type { Informer } from "../../kube/informer.ts";
import { SECRETS } from "../../kube/resources.ts";
import type { LoadBalancerTlsSecrets } from "../../providers/provider.ts";
import { TlsSecret } from "../../providers/tls_secret.ts";

/** What is kept of a Secret: its identity, type and the two TLS entries (base64, as the API sends them). */
export function trimSecret(object: unknown): unknown {
  const s = object as Secret;
  return {
    metadata: {
      name: s.metadata?.name,
      namespace: s.metadata?.namespace,
      resourceVersion: s.metadata?.resourceVersion,
      uid: s.metadata?.uid,
    },
    type: s.type,
    data: { "tls.crt": s.data?.["tls.crt"], "tls.key": s.data?.["tls.key"] },
  };
}

/** See the module doc. */
export class TlsSecretWatch {
  readonly #informer: Informer<Secret>;

  /** `report`: a missing permission to list Secrets, for `/readyz` (undefined: fine again). */
  constructor(
    informers: InformerFactory,
    private readonly capability: LoadBalancerTlsSecrets,
    report?: (problem: string | undefined) => void,
  ) {
    this.#informer = informers.for(SECRETS, { labelSelector: capability.label, transform: trimSecret });
    if (report) {
      this.#informer.onHealth((err) =>
        report(missingPermission(err, "list Secrets (TLS Secrets)", "tlsSecrets.enabled=true"))
      );
    }
  }

  /** Calls `changed(namespace, name)` whenever a watched Secret appears, changes or goes. */
  onChange(changed: (namespace: string, name: string) => void): void {
    const call = (s: Secret) => changed(s.metadata?.namespace ?? "", s.metadata?.name ?? "");
    this.#informer.addHandlers({
      onAdd: call,
      onUpdate: (old, s) => {
        if (old !== s && old.metadata?.resourceVersion !== s.metadata?.resourceVersion) call(s);
      },
      onDelete: call,
    });
  }

  /** Whether `service` names the Secret `name` (in its own namespace). */
  names(service: Service, namespace: string, name: string): boolean {
    return (service.metadata?.namespace ?? "default") === namespace &&
      this.capability.referenced(service).includes(name);
  }

  /** The Secrets `service` names, by name: their content, or `undefined` where none is offered. */
  secretsOf(service: Service): Map<string, TlsSecret | undefined> {
    const namespace = service.metadata?.namespace ?? "default";
    const out = new Map<string, TlsSecret | undefined>();
    for (const name of this.capability.referenced(service)) {
      const secret = this.#informer.get(`${namespace}/${name}`);
      out.set(name, secret && toTlsSecret(secret));
    }
    return out;
  }
}

/** The Secret's certificate and key as text; a Secret of another type or without them is offered empty. */
function toTlsSecret(secret: Secret): TlsSecret {
  const decode = (b64: string | undefined) => {
    if (!b64) return "";
    try {
      return new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
    } catch {
      return "";
    }
  };
  const ref = `${secret.metadata?.namespace}/${secret.metadata?.name}`;
  const tls = secret.type === "kubernetes.io/tls";
  return new TlsSecret(
    ref,
    tls ? decode(secret.data?.["tls.crt"]) : "",
    tls ? decode(secret.data?.["tls.key"]) : "",
    secret.metadata?.resourceVersion ?? "",
  );
}
