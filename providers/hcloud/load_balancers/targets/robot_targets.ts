/**
 * Robot Nodes as load balancer IP targets, as the official CCM adds them: the server's public IPv4
 * from the Robot list, or the Node's InternalIP with `use-private-ip` (a vSwitch address); without
 * Robot credentials, the InternalIP with `use-private-ip` only. IP targets that are no current Robot
 * Node's are removed (as the official CCM does); Cloud Nodes keep their server or selector targets.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { ProviderWarning } from "../../../provider.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import { parseProviderId } from "../../provider_id.ts";
import type { RobotServers } from "../../robot/mod.ts";

/** How Robot Nodes are reached: `enabled` is `ROBOT_ENABLED`; `servers` exists with credentials. */
export interface RobotTargetContext {
  /** `ROBOT_ENABLED`. */
  enabled: boolean;
  /** The Robot server list, present with credentials. */
  servers?: RobotServers;
}

/** Wanted IP targets (IP → Node name) for the Service's Robot Nodes, and what to warn about. */
export async function robotTargetIps(
  nodes: Node[],
  usePrivateIp: boolean,
  robot: RobotTargetContext,
): Promise<{ ips: Map<string, string>; warnings: ProviderWarning[] }> {
  const ips = new Map<string, string>();
  const warnings: ProviderWarning[] = [];
  const robotNodes = nodes.flatMap((node) => {
    const parsed = parseProviderId(node.spec?.providerID);
    return parsed.kind === "robot" ? [{ node, number: parsed.number }] : [];
  });
  if (!robot.enabled || robotNodes.length === 0) return { ips, warnings };
  if (!robot.servers && !usePrivateIp) return { ips, warnings };
  const snapshot = robot.servers ? await robot.servers.get() : undefined;
  for (const { node, number } of robotNodes) {
    const name = node.metadata!.name!;
    const internal = (node.status?.addresses ?? []).find((a) => a.type === "InternalIP")?.address;
    if (!snapshot) {
      if (internal) ips.set(internal, name);
      else {
        warnings.push({
          reason: "InternalIPNotConfigured",
          message: `no InternalIP found for Robot node ${name} (id=${number}), cannot add as load balancer ` +
            `target without Robot credentials; skipping`,
          node: name,
        });
      }
      continue;
    }
    const server = snapshot.byNumber.get(number);
    if (!server?.ipv4) {
      warnings.push({
        reason: "ServerNotFound",
        message: server
          ? `Robot server ${number} has no IPv4 address to target`
          : `No server with id ${number} was found in Robot`,
        node: name,
      });
      continue;
    }
    if (usePrivateIp && !internal) {
      warnings.push({
        reason: "InternalIPNotConfigured",
        message:
          `use-private-ip is set, but no InternalIP found for node ${name}; continuing with ExternalIP`,
      });
    }
    ips.set(usePrivateIp && internal ? internal : server.ipv4, name);
  }
  return { ips, warnings };
}

/** The two target writes and where to remember what was applied (the balancer code owns the calls). */
export interface IpTargetWrites {
  remove(ip: string): Promise<void>;
  add(ip: string): Promise<void>;
  /** The IP targets present afterwards, sorted and comma-joined. */
  applied(ips: string): void;
}

/**
 * IP targets of `lb` made `wanted` (IP → Node name): others (no current Robot Node's) removed, missing
 * ones added; a full balancer is a `MaxTargetsReached` warning on the Node, as in the official CCM.
 */
export async function reconcileIpTargets(
  lb: { name: string; targets?: { type: string; ip?: { ip: string } | null }[] },
  wanted: Map<string, string>,
  warnings: ProviderWarning[],
  writes: IpTargetWrites,
): Promise<boolean> {
  let changed = false;
  const present = new Set<string>();
  for (const target of lb.targets ?? []) {
    if (target.type !== "ip" || !target.ip) continue;
    if (wanted.has(target.ip.ip)) {
      present.add(target.ip.ip);
      continue;
    }
    await writes.remove(target.ip.ip);
    changed = true;
  }
  for (const [ip, node] of wanted) {
    if (present.has(ip)) continue;
    try {
      await writes.add(ip);
      present.add(ip);
      changed = true;
    } catch (err) {
      if (!(err instanceof CloudApiError && err.code === "resource_limit_exceeded")) throw err;
      warnings.push({
        reason: "MaxTargetsReached",
        message:
          `Node could not be added to load balancer ${lb.name} because the max number of targets has been reached`,
        node,
      });
    }
  }
  // What is there now: a target that did not fit is tried again at the next node-set change.
  writes.applied([...present].sort().join(","));
  return changed;
}
