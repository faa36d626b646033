/**
 * `HCLOUD_LOAD_BALANCERS_FIREWALL`: a Cloud Firewall, named by the operator, whose rules for this
 * cluster's balancers the CCM keeps (rules.ts). The operator applies it to the Nodes' servers (a
 * label selector in Terraform, the console): the CCM never applies a firewall, so it can never be a
 * server's first one (which would cut SSH and the API). Rules the CCM did not write — told apart by
 * their description — are kept as they are, in their order. A firewall that does not exist is
 * created (labelled with the cluster, applied to nothing); one labelled for another cluster is refused.
 *
 * Cost of a sync: one paginated list of this cluster's balancers (cut down as pages arrive), one
 * read of the firewall, and one `set_rules` only when the rules differ. A recheck while the
 * balancers are known unchanged (no Service changed since) reuses the last list: one read.
 *
 * @module
 */
import type { HcloudClient } from "../../../hcloud_api/mod.ts";
import { TerminalError } from "../../errors.ts";
import { CLUSTER_ID_LABEL } from "../names.ts";
import { balancerRules, type Opening, RulesDoNotFit, type RuleSpec } from "./rules.ts";

/** A firewall's rule as the API shows it. */
interface ShownRule {
  description?: string | null;
  direction: string;
  protocol: string;
  port?: string | null;
  source_ips?: string[];
  destination_ips?: string[];
}

interface ShownFirewall {
  id: number;
  name: string;
  labels?: Record<string, string>;
  rules: ShownRule[];
}

/** The fields of a listed balancer the rules need. */
interface ListedBalancer {
  public_net?: { enabled?: boolean; ipv4?: { ip?: string | null } | null };
  services?: { destination_port?: number; health_check?: { port?: number } }[];
  targets?: { type?: string; use_private_ip?: boolean }[];
}

/** Firewall rule entries and effective rules one firewall holds (the API's limits). */
const LIMITS = { entries: 50, effective: 500 };

/** See the module doc. */
export class HcloudFirewall {
  readonly #client: HcloudClient;
  readonly #name: string;
  readonly #clusterId: () => string | undefined;
  /** What the last sync's list found, for a recheck that knows the balancers did not change. */
  #openings?: { clusterId: string; openings: Opening[] };

  /** The firewall named `name`, kept for the cluster whose identity `clusterId` gives once known. */
  constructor(client: HcloudClient, name: string, clusterId: () => string | undefined) {
    this.#client = client;
    this.#name = name;
    this.#clusterId = clusterId;
  }

  /** The description that marks this cluster's rules. */
  static marker(clusterId: string): string {
    return `deno-ccm ${clusterId}: load balancers to the ports they send to`;
  }

  /**
   * Brings the rules in step with the balancers; says whether anything was written. With
   * `balancersUnchanged`, the balancers of the last sync are taken as they were (no list).
   */
  async sync(balancersUnchanged = false): Promise<{ changed: boolean; rules: number }> {
    const clusterId = this.#clusterId();
    // Without the cluster's identity its balancers cannot be told from others': nothing to do.
    if (!clusterId) return { changed: false, rules: 0 };
    const known = balancersUnchanged && this.#openings?.clusterId === clusterId
      ? this.#openings.openings
      : undefined;
    const openings = known ?? await this.#list(clusterId);
    this.#openings = { clusterId, openings };
    const marker = HcloudFirewall.marker(clusterId);
    const found = await this.#find();
    if (found?.labels?.[CLUSTER_ID_LABEL] !== undefined && found.labels[CLUSTER_ID_LABEL] !== clusterId) {
      throw new TerminalError(
        `HCLOUD_LOAD_BALANCERS_FIREWALL: firewall ${this.#name} is labelled for another cluster ` +
          `(${CLUSTER_ID_LABEL}=${
            found.labels[CLUSTER_ID_LABEL]
          }); name one of this cluster's or an unlabelled one`,
      );
    }
    const others = (found?.rules ?? []).filter((r) => r.description !== marker);
    let desired: RuleSpec[];
    try {
      desired = balancerRules(openings, {
        entries: LIMITS.entries - others.length,
        effective: LIMITS.effective -
          others.reduce(
            (n, r) => n + Math.max(1, (r.source_ips ?? []).length + (r.destination_ips ?? []).length),
            0,
          ),
      }, marker);
    } catch (err) {
      if (err instanceof RulesDoNotFit) {
        throw new TerminalError(`firewall ${this.#name}: ${err.message}`, { cause: err });
      }
      throw err;
    }
    const mine = (found?.rules ?? []).filter((r) => r.description === marker);
    if (found && sameRules(mine, desired)) return { changed: false, rules: desired.length };
    const rules = [...others.map(requestRule), ...desired];
    if (!found) {
      await this.#client.call(
        "create firewall",
        this.#client.api.POST("/firewalls", {
          body: { name: this.#name, labels: { [CLUSTER_ID_LABEL]: clusterId }, rules: rules as never },
        }),
      );
    } else {
      await this.#client.call(
        "set firewall rules",
        this.#client.api.POST("/firewalls/{id}/actions/set_rules", {
          params: { path: { id: found.id } },
          body: { rules: rules as never },
        }),
      );
    }
    return { changed: true, rules: desired.length };
  }

  async #find(): Promise<ShownFirewall | undefined> {
    const data = await this.#client.call(
      "get firewall",
      this.#client.api.GET("/firewalls", { params: { query: { name: this.#name } } }),
    );
    return (data.firewalls as ShownFirewall[] | undefined)?.[0];
  }

  /** What each of this cluster's balancers needs opened (public ones reaching targets publicly). */
  async #list(clusterId: string): Promise<Opening[]> {
    const listed = await this.#client.listAll<ListedBalancer, Opening | undefined>(
      "list load balancers",
      "load_balancers",
      (page) =>
        this.#client.api.GET("/load_balancers", {
          params: { query: { label_selector: `${CLUSTER_ID_LABEL}=${clusterId}`, page, per_page: 10 } },
        }),
      (lb) => {
        const ip = lb.public_net?.enabled ? lb.public_net.ipv4?.ip : undefined;
        // Targets reached through the Network are not filtered; IP targets (Robot) always go public.
        const publicTargets = (lb.targets ?? []).some((t) => t.type === "ip" || !t.use_private_ip);
        if (!ip || !publicTargets) return undefined;
        const ports = (lb.services ?? []).flatMap((s) => [s.destination_port, s.health_check?.port])
          .filter((p): p is number => typeof p === "number");
        return { source: ip, ports };
      },
    );
    return listed.filter((o): o is Opening => o !== undefined);
  }
}

/** The rule as a request takes it: what the API showed, without the empty fields. */
function requestRule(r: ShownRule): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(r).filter(([, v]) =>
      v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)
    ),
  );
}

function sameRules(shown: ShownRule[], desired: RuleSpec[]): boolean {
  const key = (r: { port?: string | null; source_ips?: string[]; direction: string; protocol: string }) =>
    `${r.direction}|${r.protocol}|${r.port ?? ""}|${[...(r.source_ips ?? [])].sort().join(",")}`;
  const a = shown.map(key).sort();
  const b = desired.map(key).sort();
  return a.length === b.length && a.every((k, i) => k === b[i]);
}
