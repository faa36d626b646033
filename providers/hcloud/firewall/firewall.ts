/**
 * `HCLOUD_LOAD_BALANCERS_FIREWALL`: a Cloud Firewall, named by the operator, whose rules for this
 * cluster's balancers the CCM keeps (rules.ts). The operator applies it to the Nodes' servers (a
 * label selector in Terraform, the console): the CCM never applies a firewall, so it can never be a
 * server's first one (which would cut SSH and the API). Rules the CCM did not write — told apart by
 * their description — are kept as they are, in their order. A firewall that does not exist is
 * created (labelled with the cluster, applied to nothing); one labelled for another cluster is refused.
 *
 * NodePort Services the operator allows open their NodePorts in it too (node_ports.ts): after the
 * balancers' rules, oldest Service first, each whole or refused whole. Balancers made outside
 * Kubernetes that Services co-manage carry no label of ours: each is read by the ID the Services'
 * sealed records name, and opened for the ports they own on it.
 *
 * Cost of a sync: one paginated list of this cluster's balancers (50 a page, each read as it streams), one
 * read of the firewall, and one `set_rules` only when the rules differ. A recheck while the
 * balancers are known unchanged (no LoadBalancer Service changed since) reuses the last list: one
 * read. NodePort Services are read from the cluster's informer: no call.
 *
 * @module
 */
import { CloudApiError, type HcloudClient } from "../../../hcloud_api/mod.ts";
import { TerminalError } from "../../errors.ts";
import { CLUSTER_ID_LABEL, FIREWALL_NODEPORTS_ANNOTATION } from "../names.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import {
  balancerRules,
  effectiveCount,
  nodePortRules,
  type NodePortRuleSpec,
  type Opening,
} from "./rules.ts";
import {
  type ListedBalancer,
  openingOf,
  requestRule,
  sameRules,
  type ShownFirewall,
  type ShownRule,
} from "./shown_rules.ts";
import { nodePortOpenings, type Refusal } from "./node_ports.ts";

/** A firewall's rule as the API shows it. */
const LIMITS = { entries: 50, effective: 500 };

/** Where NodePort Services come from, and which namespaces may open theirs. */
export interface NodePortSource {
  /** The cluster's Services now; undefined while unknown (the NodePort rules are then left as they are). */
  services(): Service[] | undefined;
  /** `HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES`: `"*"`, a list, or none. */
  namespaces?: "*" | readonly string[];
}

/** Co-managed balancers (made outside Kubernetes): ID → the listen ports this cluster's Services own. */
export type CoManagedPorts = () => Promise<Map<number, number[]>>;

/** What a sync did: whether it wrote, how many rules the CCM keeps, and the Services refused. */
export interface FirewallSyncResult {
  /** Whether rules were written. */
  changed: boolean;
  /** How many rules the CCM keeps (the balancers' and the NodePort Services'). */
  rules: number;
  /** NodePort Services whose request was not taken, each with why. */
  refused: Refusal[];
  /** What the operator should know of the firewall itself (applied to no server), if anything. */
  notice?: string;
  /** Balancers (by name) the firewall had no room for: their addresses are not allowed (Q6). */
  leftOut?: string[];
}

/** See the module doc. */
export class HcloudFirewall {
  readonly #client: HcloudClient;
  readonly #name: string;
  readonly #clusterId: () => string | undefined;
  readonly #nodePorts?: NodePortSource;
  readonly #coManaged?: CoManagedPorts;
  /** What the last sync's list found, for a recheck that knows the balancers did not change. */
  #openings?: { clusterId: string; openings: Opening[] };
  /** The firewall's ID, once read (action logs name it). */
  #id?: number;

  /**
   * The firewall named `name`, kept for the cluster whose identity `clusterId` gives once known;
   * with `nodePorts`, allowed NodePort Services open their NodePorts in it; with `coManaged`, the
   * balancers Services co-manage are opened for the ports those Services own (a read each).
   */
  constructor(
    client: HcloudClient,
    name: string,
    clusterId: () => string | undefined,
    nodePorts?: NodePortSource,
    coManaged?: CoManagedPorts,
  ) {
    this.#client = client;
    this.#name = name;
    this.#clusterId = clusterId;
    this.#nodePorts = nodePorts;
    this.#coManaged = coManaged;
  }

  /**
   * Whether resources an action log names include this firewall (a change to its rules or to where
   * it applies, maybe made outside the CCM). False until a sync has read it.
   */
  named(resources: { id: number; type: string }[]): boolean {
    return this.#id !== undefined && resources.some((r) => r.type === "firewall" && r.id === this.#id);
  }

  /** The description that marks this cluster's rules for its balancers. */
  static marker(clusterId: string): string {
    return `deno-ccm ${clusterId}: load balancers to the ports they send to`;
  }

  /** The description that marks the rules opening one Service's NodePorts (`namespace/name`). */
  static nodePortMarker(clusterId: string, service: string): string {
    return `deno-ccm ${clusterId}: NodePort ${service}`;
  }

  /** Whether a rule is this cluster's (any rule the CCM writes for it); all others are the operator's. */
  static ours(clusterId: string, description: string | null | undefined): boolean {
    return description === HcloudFirewall.marker(clusterId) ||
      !!description?.startsWith(`deno-ccm ${clusterId}: NodePort `);
  }

  /**
   * Brings the rules in step with the balancers; says whether anything was written. With
   * `balancersUnchanged`, the balancers of the last sync are taken as they were (no list).
   */
  async sync(balancersUnchanged = false): Promise<FirewallSyncResult> {
    const clusterId = this.#clusterId();
    // Without the cluster's identity its balancers cannot be told from others': nothing to do.
    if (!clusterId) return { changed: false, rules: 0, refused: [] };
    const known = balancersUnchanged && this.#openings?.clusterId === clusterId
      ? this.#openings.openings
      : undefined;
    const openings = known ?? await this.#list(clusterId);
    this.#openings = { clusterId, openings };
    const marker = HcloudFirewall.marker(clusterId);
    // The firewall is read after the balancers are listed, the last request before the write: the API
    // has no precondition on a firewall's rules, so an operator's edit can be lost only within that one
    // round trip (review Q15), and the next sync keeps whatever is there then.
    const found = await this.#find();
    if (found?.labels?.[CLUSTER_ID_LABEL] !== undefined && found.labels[CLUSTER_ID_LABEL] !== clusterId) {
      throw new TerminalError(
        `HCLOUD_LOAD_BALANCERS_FIREWALL: firewall ${this.#name} is labelled for another cluster ` +
          `(${CLUSTER_ID_LABEL}=${
            found.labels[CLUSTER_ID_LABEL]
          }); name one of this cluster's or an unlabelled one`,
      );
    }
    const others = (found?.rules ?? []).filter((r) => !HcloudFirewall.ours(clusterId, r.description));
    const room = {
      entries: LIMITS.entries - others.length,
      effective: LIMITS.effective - effectiveCount(others),
    };
    // What the firewall allows the balancers now keeps its place when not everything fits.
    const allowed = new Set(
      (found?.rules ?? []).filter((r) => r.description === marker).flatMap((r) => r.source_ips ?? []),
    );
    const planned = balancerRules(openings, room, marker, allowed);
    const desired: (ShownRule | NodePortRuleSpec)[] = planned.rules;
    const leftOut = planned.leftOut.length ? { leftOut: planned.leftOut } : {};
    const refused: Refusal[] = [];
    if (this.#nodePorts) {
      const left = {
        entries: room.entries - desired.length,
        effective: room.effective - effectiveCount(desired),
      };
      const services = this.#nodePorts.services();
      if (services === undefined) {
        // Services unknown (not yet listed): the NodePort rules stay as they are.
        desired.push(
          ...(found?.rules ?? []).filter((r) =>
            r.description !== marker && HcloudFirewall.ours(clusterId, r.description)
          ),
        );
      } else {
        const asked = nodePortOpenings(services, this.#nodePorts.namespaces);
        refused.push(...asked.refused);
        for (const o of asked.openings) {
          const rules = nodePortRules(
            o.ports,
            o.sources,
            HcloudFirewall.nodePortMarker(clusterId, o.service),
          );
          if (rules.length <= left.entries && effectiveCount(rules) <= left.effective) {
            desired.push(...rules);
            left.entries -= rules.length;
            left.effective -= effectiveCount(rules);
          } else {
            refused.push({
              service: o.service,
              message:
                `${FIREWALL_NODEPORTS_ANNOTATION}: its ${rules.length} rule(s) of ${effectiveCount(rules)} ` +
                `effective rules do not fit in firewall ${this.#name} (${left.entries} rules and ${left.effective} ` +
                "effective rules left after the operator's, the balancers' and older Services' rules); " +
                "the firewall opens nothing for this Service",
            });
          }
        }
      }
    }
    const mine = (found?.rules ?? []).filter((r) => HcloudFirewall.ours(clusterId, r.description));
    // Rules on a firewall applied to nothing protect nothing: worth telling the operator.
    const notice = found?.applied_to?.length
      ? undefined
      : `firewall ${this.#name} is applied to no server: its rules protect nothing until you apply it ` +
        "to the Nodes' servers (the CCM never applies it, so it is never a server's first firewall)";
    const told = notice ? { notice } : {};
    if (found && sameRules(mine, desired)) {
      return { changed: false, rules: desired.length, refused, ...told, ...leftOut };
    }
    const rules = [...others, ...desired].map((r) => requestRule(r as ShownRule));
    if (!found) {
      const created = await this.#client.call(
        "create firewall",
        this.#client.api.POST("/firewalls", {
          body: { name: this.#name, labels: { [CLUSTER_ID_LABEL]: clusterId }, rules: rules as never },
        }),
      );
      this.#id = (created.firewall as { id?: number } | undefined)?.id;
    } else {
      await this.#client.call(
        "set firewall rules",
        this.#client.api.POST("/firewalls/{id}/actions/set_rules", {
          params: { path: { id: found.id } },
          body: { rules: rules as never },
        }),
      );
    }
    return { changed: true, rules: desired.length, refused, ...told, ...leftOut };
  }

  async #find(): Promise<ShownFirewall | undefined> {
    const data = await this.#client.call(
      "get firewall",
      this.#client.api.GET("/firewalls", { params: { query: { name: this.#name } } }),
    );
    const found = (data.firewalls as ShownFirewall[] | undefined)?.[0];
    this.#id = found?.id;
    return found;
  }

  /** What each of this cluster's balancers needs opened (public ones reaching targets publicly). */
  async #list(clusterId: string): Promise<Opening[]> {
    const listed = await this.#client.listAllStreamed<ListedBalancer, Opening | undefined>(
      "list load balancers",
      "load_balancers",
      (page, streamed) =>
        this.#client.api.GET("/load_balancers", {
          params: { query: { label_selector: `${CLUSTER_ID_LABEL}=${clusterId}`, page, per_page: 50 } },
          ...streamed,
        }),
      (lb) => openingOf(lb),
    );
    // Co-managed balancers carry no label of ours: each is read by the ID its Services recorded.
    for (const [id, ports] of await this.#coManaged?.() ?? []) {
      try {
        const { load_balancer } = await this.#client.call(
          "get load balancer",
          this.#client.api.GET("/load_balancers/{id}", { params: { path: { id } } }),
        );
        // Its own rules, for its Services' ports only (Q5).
        const opening = openingOf(load_balancer as ListedBalancer, ports);
        if (opening) listed.push({ ...opening, exclusive: true });
      } catch (err) {
        if (!(err instanceof CloudApiError && err.status === 404)) throw err;
      }
    }
    return listed.filter((o): o is Opening => o !== undefined);
  }
}
