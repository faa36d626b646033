/**
 * The provider's {@link LoadBalancerInventory}: this cluster's balancers as a whole, from one list
 * by the cluster label each — whose Services still have one, which drifted from what their last
 * sync asked (repaired by the housekeeping's resync), whose targets are all unhealthy, and the sweep
 * of orphans. Co-managed balancers carry no label of ours (their Services count as having one);
 * the members of a shared balancer count once, as that balancer.
 *
 * @module
 */
import { withSignal } from "../../../../lib/cancellation.ts";
import type { DriftReport, LoadBalancerInventory } from "../../../provider.ts";
import type { HcloudClient } from "../../../../hcloud_api/mod.ts";
import type { ServerLabeler } from "../../servers/mod.ts";
import { SHARE_LABEL } from "../../names.ts";
import { existingOwners, sweepOrphans } from "./inventory.ts";
import { driftOf, type DriftRecord, listClusterLoadBalancers, ownerOf } from "./drift.ts";
import { sharedAlive, type SharedBalancers } from "../sharing/mod.ts";
import type { CoManagedBalancers } from "../sharing/mod.ts";
import type { TlsCertificates } from "../certificates/mod.ts";
import {
  allUnhealthy,
  type BalancerHealth,
  balancerHealth,
  targetHealth,
  type TargetHealthGauge,
} from "./target_health.ts";
import type { ClusterFacts } from "../core/cluster_facts.ts";
import type { BalancerTraffic } from "./traffic.ts";

/** What the inventory reads of the load balancers' state. */
export interface InventorySources {
  /** The Cloud API client. */
  client: HcloudClient;
  /**
   * The cluster served: nothing is listed or swept without its identity; while its Services are
   * unknown every owner is taken to be alive.
   */
  facts: ClusterFacts;
  /** Labels servers for label-selector targets; checks what balancers resolve. */
  labeler: ServerLabeler;
  /** The namespace-shared balancers. */
  shared: SharedBalancers;
  /** The balancers made outside Kubernetes that Services co-manage. */
  coManaged: CoManagedBalancers;
  /** What the last successful sync asked of each balancer (by ID). */
  asked: ReadonlyMap<number, DriftRecord>;
  /** The Robot IP targets applied per balancer name, when Robot is on. */
  appliedIps?: ReadonlyMap<string, string>;
  /** Target health from each drift list, when metrics are kept. */
  health?: TargetHealthGauge;
  /** Balancer traffic read after each drift list (opt-in: `HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS`). */
  traffic?: BalancerTraffic;
  /** Certificates from TLS Secrets, when the feature is on: the sweep takes the unused ones too. */
  tls?: TlsCertificates;
  /**
   * Called after a drift list in which some balancer has a target failing its health check (a
   * firewall that no longer lets it through is one cause: its keeper looks again).
   */
  onUnhealthy?: () => void;
  /** The time orphans' ages are read against (default the system's). */
  now?: () => number;
}

/** A certificate uploaded from a TLS Secret younger than this may still wait for its swap. */
const TLS_ORPHAN_MIN_AGE_MS = 10 * 60_000;

/** See the module doc. */
export class ClusterInventory implements LoadBalancerInventory {
  /** An inventory over the balancers, certificates and Services `sources` give. */
  constructor(readonly sources: InventorySources) {}

  /** See {@link LoadBalancerInventory.owners}. */
  async owners(expected: number, signal?: AbortSignal): Promise<Set<string> | undefined> {
    const { client, labeler, shared, coManaged } = this.sources;
    return await withSignal(signal, async () => {
      const clusterId = this.sources.facts.clusterId();
      if (!clusterId) return undefined;
      const attached = [...coManaged.attached.keys()];
      const members = [...shared.members];
      const balancers = new Set(members.map(([, id]) => id)).size;
      const owners = await existingOwners(
        client,
        clusterId,
        expected - attached.length - members.length + balancers,
        (lb) => labeler.checkResolved(lb),
        (lb) =>
          lb.labels?.[SHARE_LABEL] === undefined
            ? []
            : members.filter(([, id]) => id === lb.id).map(([uid]) => uid),
      );
      if (owners) { for (const uid of attached) owners.add(uid); }
      return owners;
    });
  }

  /** See {@link LoadBalancerInventory.drift}. */
  async drift(signal?: AbortSignal): Promise<DriftReport | undefined> {
    const { client, labeler, shared, coManaged, asked, appliedIps, health } = this.sources;
    return await withSignal(signal, async () => {
      const clusterId = this.sources.facts.clusterId();
      if (!clusterId) return undefined;
      // The targets' health is read as the API sent it, before the list drops its details.
      const healths: BalancerHealth[] = [];
      const unhealthy = new Map<string, string>();
      let failing = false;
      const listed = await listClusterLoadBalancers(
        client,
        clusterId,
        (lb) => {
          labeler.checkResolved(lb);
          if (health) healths.push(balancerHealth(lb));
          failing ||= targetHealth(lb).unhealthy > 0;
          const why = allUnhealthy(lb);
          const uid = ownerOf(lb);
          if (why && uid) unhealthy.set(uid, why);
        },
      );
      health?.update(healths);
      if (failing) this.sources.onUnhealthy?.();
      const owners = new Set<string>();
      const drifted = new Map<string, string[]>();
      for (const lb of listed) {
        if (lb.labels?.[SHARE_LABEL] !== undefined) {
          for (const [uid, id] of shared.members) if (id === lb.id) owners.add(uid);
          for (const [uid, words] of shared.drift(lb)) drifted.set(uid, words);
          continue;
        }
        const uid = ownerOf(lb);
        if (uid) owners.add(uid);
        const record = asked.get(lb.id);
        if (!record || record.serviceUid !== uid) continue;
        const differences = driftOf(lb, { ...record, ipTargets: appliedIps?.get(lb.name) });
        if (differences.length) drifted.set(record.serviceUid, differences);
      }
      for (const uid of coManaged.attached.keys()) owners.add(uid);
      // Opt-in and bounded (traffic.ts); never fails the repair.
      await this.sources.traffic?.pass(listed.map((lb) => ({ id: lb.id, name: lb.name })), signal);
      return { owners, drifted, unhealthy };
    });
  }

  /** See {@link LoadBalancerInventory.sweepOrphans}. */
  sweepOrphans(liveServiceUids: Set<string>, signal?: AbortSignal): Promise<number> {
    const clusterId = this.sources.facts.clusterId();
    if (!clusterId) return Promise.resolve(0);
    // The Services as they are when each balancer is judged (unknown: every owner is alive).
    const alive = (labels: Record<string, string>) => {
      const services = this.sources.facts.services();
      return !services || sharedAlive(labels, services, liveServiceUids);
    };
    return withSignal(signal, async () => {
      const now = this.sources.now ?? Date.now;
      const balancers = await sweepOrphans(this.sources.client, clusterId, liveServiceUids, alive, now);
      // After the balancers: a certificate only an orphan used is free now.
      const certificates = await this.sources.tls?.sweepUnused(clusterId, TLS_ORPHAN_MIN_AGE_MS, now()) ?? 0;
      return balancers + certificates;
    });
  }
}
