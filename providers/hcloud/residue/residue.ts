/**
 * What deno-ccm leaves in the cloud project once it is gone (the way back to the official CCM): found
 * by this cluster's identity, each piece with what the official CCM does with it, and the pieces that
 * only mark or duplicate removed on request. Nothing here removes what still serves traffic on its
 * own: a label-selector target goes only from a balancer that already has server targets (the official
 * CCM's), a certificate only when no balancer uses it; shared balancers and firewall rules are listed
 * with the command that removes them, for the operator to run once the Services have moved.
 *
 * @module
 */
import type { ActionWaiter, HcloudClient, Schemas } from "../../../hcloud_api/mod.ts";
import {
  CLUSTER_ID_LABEL,
  CO_MANAGED_STATE,
  CONSENT_LABEL,
  SHARE_LABEL,
  TARGET_LABEL,
  TLS_REF_LABEL,
} from "../names.ts";

/** The kinds of residue, in the order they are reported and removed. */
export type ResidueKind =
  | "selector-target"
  | "server-label"
  | "balancer-labels"
  | "tls-certificate"
  | "certificate-labels"
  | "shared-balancer"
  | "co-managed-balancer"
  | "firewall-rules";

/** One piece of residue. */
export interface ResidueItem {
  /** What kind of residue it is. */
  kind: ResidueKind;
  /** The cloud object it is on (server, balancer, certificate or firewall). */
  id: number;
  /** That object's name. */
  name: string;
  /** What it is, and what the official CCM does with it. */
  detail: string;
  /** Why it is left to the operator (undefined: removed with `--residue=remove`). */
  kept?: string;
}

/**
 * The labels deno-ccm writes on balancers and certificates: `deno-ccm/…`, but for the consent label an
 * operator puts on a balancer made outside Kubernetes (theirs to keep).
 */
function ourLabels(labels: Record<string, string> | undefined): string[] {
  return Object.keys(labels ?? {}).filter((k) => k.startsWith("deno-ccm/") && k !== CONSENT_LABEL);
}

/** `labels` without deno-ccm's. */
function withoutOurs(labels: Record<string, string> | undefined): Record<string, string> {
  const drop = new Set(ourLabels(labels));
  return Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => !drop.has(k)));
}

type LB = Schemas["load_balancer"];

/** Every piece of this cluster's residue (a list of each object kind: servers by label, the rest whole). */
export async function findResidue(client: HcloudClient, clusterId: string): Promise<ResidueItem[]> {
  const api = client.api;
  const page = (p: number) => ({ page: p, per_page: 50 });
  const selector = `${TARGET_LABEL}=${clusterId}`;
  const servers = await client.listAll<Schemas["server"]>(
    "list servers",
    "servers",
    (p) => api.GET("/servers", { params: { query: { ...page(p), label_selector: selector } } }),
  );
  const balancers = await client.listAll<LB>(
    "list load balancers",
    "load_balancers",
    (p) => api.GET("/load_balancers", { params: { query: page(p) } }),
  );
  const certificates = await client.listAll<Schemas["certificate"]>(
    "list certificates",
    "certificates",
    (p) =>
      api.GET("/certificates", {
        params: { query: { ...page(p), label_selector: `${CLUSTER_ID_LABEL}=${clusterId}` } },
      }),
  );
  const firewalls = await client.listAll<Schemas["firewall"]>(
    "list firewalls",
    "firewalls",
    (p) => api.GET("/firewalls", { params: { query: page(p) } }),
  );
  const out: ResidueItem[] = [];
  const usedCertificates = new Set(
    balancers.flatMap((lb) => (lb.services ?? []).flatMap((s) => s.http?.certificates ?? [])),
  );
  for (const lb of balancers) {
    const ours = (lb.targets ?? []).some((t) =>
      t.type === "label_selector" && t.label_selector?.selector === selector
    );
    const serverTargets = (lb.targets ?? []).filter((t) => t.type === "server").length;
    // Made outside Kubernetes and co-managed (`attach-to`, `id`): its server targets are its maker's,
    // and the ports ours added reach this cluster's Nodes only through our target.
    const coManaged = ours && lb.labels?.[CLUSTER_ID_LABEL] !== clusterId;
    if (ours) {
      out.push({
        kind: "selector-target",
        id: lb.id,
        name: lb.name,
        detail:
          `label-selector target ${selector} (the official CCM adds a server target per Node and leaves it)`,
        kept: coManaged
          ? "co-managed (below): the ports this cluster added reach its Nodes through it"
          : serverTargets === 0
          ? "no server target yet: it is the balancer's only one; let the official CCM sync this Service first"
          : undefined,
      });
    }
    if (coManaged) {
      out.push({
        kind: "co-managed-balancer",
        id: lb.id,
        name: lb.name,
        detail:
          "made outside Kubernetes; this cluster's Services added ports to it (`attach-to`, `id`): the " +
          "official CCM reads neither annotation, makes each such Service a balancer of its own, and leaves " +
          "this one as it is",
        kept: "once those Services have their own balancers, remove the ports they added (each Service's " +
          `${CO_MANAGED_STATE} annotation names them): hcloud load-balancer delete-service ${lb.id} ` +
          `--listen-port <port>; then the target: hcloud load-balancer remove-target ${lb.id} ` +
          `--label-selector ${selector}`,
      });
    }
    if (lb.labels?.[SHARE_LABEL] !== undefined && lb.labels?.[CLUSTER_ID_LABEL] === clusterId) {
      out.push({
        kind: "shared-balancer",
        id: lb.id,
        name: lb.name,
        detail:
          `shared by the Services of key "${lb.labels[SHARE_LABEL]}": the official CCM makes one balancer ` +
          "per Service instead and never deletes this one",
        kept: `delete it once its Services have their own: hcloud load-balancer delete ${lb.id}`,
      });
    } else if (lb.labels?.[CLUSTER_ID_LABEL] === clusterId) {
      out.push({
        kind: "balancer-labels",
        id: lb.id,
        name: lb.name,
        detail: `labels ${ourLabels(lb.labels).join(", ")} (the official CCM ignores them)`,
      });
    }
  }
  // A selector target that stays (a balancer's only target) still follows the labels: they stay too.
  const followed = out.filter((i) => i.kind === "selector-target" && i.kept).map((i) => i.name);
  for (const server of servers) {
    out.push({
      kind: "server-label",
      id: server.id,
      name: server.name,
      detail: `label ${selector} (what the label-selector targets follow; the official CCM ignores it)`,
      kept: followed.length ? `the selector target of ${followed.join(", ")} still follows it` : undefined,
    });
  }
  for (const cert of certificates) {
    const fromSecret = cert.labels?.[TLS_REF_LABEL] !== undefined;
    if (fromSecret) {
      out.push({
        kind: "tls-certificate",
        id: cert.id,
        name: cert.name,
        detail: "uploaded from a TLS Secret (the official CCM cannot read Secrets and never deletes it)",
        kept: usedCertificates.has(cert.id)
          ? "a balancer still serves it: name another certificate on that port first"
          : undefined,
      });
    } else {
      out.push({
        kind: "certificate-labels",
        id: cert.id,
        name: cert.name,
        detail: `labels ${ourLabels(cert.labels).join(", ")} (the official CCM ignores them)`,
      });
    }
  }
  const marker = `deno-ccm ${clusterId}`;
  for (const fw of firewalls) {
    const rules = (fw.rules ?? []).filter((r) => r.description?.startsWith(marker));
    if (!rules.length) continue;
    out.push({
      kind: "firewall-rules",
      id: fw.id,
      name: fw.name,
      detail:
        `${rules.length} rules for this cluster's balancers and NodePorts (the official CCM keeps no firewall)`,
      kept:
        `the official CCM will not keep them current: remove them in the console or with hcloud firewall ` +
        `replace-rules ${fw.id}`,
    });
  }
  const order: ResidueKind[] = [
    "selector-target",
    "server-label",
    "balancer-labels",
    "tls-certificate",
    "certificate-labels",
    "shared-balancer",
    "co-managed-balancer",
    "firewall-rules",
  ];
  return out.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || a.id - b.id);
}

/**
 * Removes the items not kept, in order (a balancer's selector target before the labels it follows);
 * `report` hears each outcome. Returns how many were removed and how many failed.
 */
export async function removeResidue(
  client: HcloudClient,
  waiter: ActionWaiter,
  clusterId: string,
  items: ResidueItem[],
  report: (item: ResidueItem, error?: string) => void,
): Promise<{ removed: number; failed: number }> {
  const api = client.api;
  const path = (id: number) => ({ params: { path: { id } } });
  let removed = 0;
  let failed = 0;
  for (const item of items.filter((i) => !i.kept)) {
    try {
      switch (item.kind) {
        case "selector-target": {
          const { action } = await client.call(
            "remove target",
            api.POST("/load_balancers/{id}/actions/remove_target", {
              ...path(item.id),
              body: { type: "label_selector", label_selector: { selector: `${TARGET_LABEL}=${clusterId}` } },
            }),
          );
          await waiter.wait(action);
          break;
        }
        case "server-label": {
          const { server } = await client.call("get server", api.GET("/servers/{id}", path(item.id)));
          const labels = { ...server?.labels };
          delete labels[TARGET_LABEL];
          await client.call(
            "update server",
            api.PUT("/servers/{id}", { ...path(item.id), body: { labels } }),
          );
          break;
        }
        case "balancer-labels": {
          const { load_balancer: lb } = await client.call(
            "get load balancer",
            api.GET("/load_balancers/{id}", path(item.id)),
          );
          await client.call(
            "update load balancer",
            api.PUT("/load_balancers/{id}", { ...path(item.id), body: { labels: withoutOurs(lb.labels) } }),
          );
          break;
        }
        case "tls-certificate":
          await client.call("delete certificate", api.DELETE("/certificates/{id}", path(item.id)));
          break;
        case "certificate-labels": {
          const { certificate } = await client.call(
            "get certificate",
            api.GET("/certificates/{id}", path(item.id)),
          );
          await client.call(
            "update certificate",
            api.PUT("/certificates/{id}", {
              ...path(item.id),
              body: { labels: withoutOurs(certificate.labels) },
            }),
          );
          break;
        }
        default:
          continue; // listed only
      }
      removed++;
      report(item);
    } catch (err) {
      failed++;
      report(item, err instanceof Error ? err.message : String(err));
    }
  }
  return { removed, failed };
}
