/**
 * Drift repair: what a load balancer we manage should look like, remembered from the last sync that
 * succeeded, compared with the balancer as one paginated list shows it. A difference (a service
 * deleted in the console, a changed health check, a removed target) names the Service whose sync
 * puts it back. The comparison is the plan the sync itself would make (`plan.ts`), so drift is
 * exactly "a sync would change something"; what a sync cannot change (a target beyond the type's
 * limit) is never drift.
 *
 * @module
 */
import type { components, HcloudClient } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import type { DesiredService } from "../core/desired.ts";
import { CLUSTER_ID_LABEL, SERVICE_UID_LABEL } from "../core/labels.ts";
import {
  type LbAction,
  planExposure,
  planLabelTarget,
  planServerTargets,
  planServices,
  planShape,
} from "../core/plan.ts";

type LB = components["schemas"]["load_balancer"];

/** What the last successful sync of a balancer asked for. */
export interface DriftRecord {
  /** The UID of the Service the balancer belongs to. */
  serviceUid: string;
  /** The cluster ID the balancer is labelled with, when it is. */
  clusterId?: string;
  /** The Service as it was read for that sync. */
  spec: LoadBalancerSpec;
  /** The services (ports) the balancer was given. */
  services: DesiredService[];
  /** A label-selector target, or the servers targeted one by one. */
  targets: { selector: string } | { serverIds: number[] };
  /** The network the balancer is attached to, when there is one. */
  networkId?: number;
  /** Robot Nodes' IP targets as applied (sorted, comma-joined), when Robot is on. */
  ipTargets?: string;
}

/** The differences between `lb` and `record`, in words; empty when a sync would change nothing. */
export function driftOf(lb: LB, record: DriftRecord): string[] {
  const owner = { serviceUid: record.serviceUid, clusterId: record.clusterId };
  const { spec } = record;
  const actions: LbAction[] = [
    ...planShape(lb, spec, owner),
    ...planExposure(lb, spec),
    ...planServices(lb, record.services),
  ];
  if ("selector" in record.targets) {
    actions.push(...planLabelTarget(lb, record.targets.selector, spec.usePrivateIp));
  } else {
    const servers = (lb.targets ?? []).filter((t) => t.type === "server").length;
    const room = servers < (lb.load_balancer_type?.max_targets ?? Infinity);
    actions.push(
      ...planServerTargets(lb, record.targets.serverIds, spec.usePrivateIp)
        .filter((a) => a.kind === "remove_target" || room),
    );
  }
  const words = actions.map(describe);
  if (record.networkId !== undefined && !(lb.private_net ?? []).some((p) => p.network === record.networkId)) {
    words.push(`not attached to network ${record.networkId}`);
  }
  if (record.ipTargets !== undefined) {
    const ips = (lb.targets ?? []).filter((t) => t.type === "ip" && t.ip).map((t) => t.ip!.ip).sort().join(
      ",",
    );
    if (ips !== record.ipTargets) words.push("IP targets changed");
  }
  return [...new Set(words)];
}

function describe(action: LbAction): string {
  switch (action.kind) {
    case "update":
      return "labels or name changed";
    case "change_dns_ptr":
      return `reverse DNS of ${action.ip} changed`;
    case "change_algorithm":
      return "algorithm changed";
    case "change_type":
      return "type changed";
    case "public_interface":
      return "public interface changed";
    case "change_protection":
      return "delete protection changed";
    case "delete_service":
      return `service on port ${action.listenPort} added`;
    case "add_service":
      return `service on port ${action.service.listen_port} deleted`;
    case "update_service":
      return `service on port ${action.service.listen_port} changed`;
    case "remove_target":
      return "target added";
    case "add_target":
      return "target removed";
  }
}

/**
 * This cluster's balancers, 50 a page, each page read as it streams and each balancer's nested
 * selector targets dropped as it arrives: a label selector lists every server it matches (~150 bytes
 * each), so 50 balancers over 5000 Nodes are a 37 MB page, but only one balancer is held at a time.
 */
export function listClusterLoadBalancers(
  client: HcloudClient,
  clusterId: string,
  sample?: (lb: LB) => void,
): Promise<LB[]> {
  return client.listAllStreamed<LB, LB>(
    "list load balancers",
    "load_balancers",
    (page, streamed) =>
      client.api.GET("/load_balancers", {
        params: { query: { label_selector: `${CLUSTER_ID_LABEL}=${clusterId}`, page, per_page: 50 } },
        ...streamed,
      }),
    // `sample` sees the servers a label selector resolves before they are dropped to save memory.
    (lb) => {
      sample?.(lb);
      return { ...lb, targets: (lb.targets ?? []).map(({ targets: _, health_status: __, ...t }) => t) };
    },
  );
}

/** The Service UID a listed balancer belongs to. */
export function ownerOf(lb: LB): string | undefined {
  return lb.labels?.[SERVICE_UID_LABEL];
}
