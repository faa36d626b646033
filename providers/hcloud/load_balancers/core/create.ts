/**
 * Creating a Service's balancer in one request (services, targets and network included where the
 * API allows), and keeping it attached to the cluster's network.
 *
 * @module
 */
import { TerminalError } from "../../../errors.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import { SERVICE_NAME_LABEL, SERVICE_NAMESPACE_LABEL, SERVICE_UID_LABEL } from "./labels.ts";
import { SHARE_LABEL } from "../../names.ts";
import type { ActionWaiter, HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import type { DesiredService } from "./desired.ts";
import { primaryIpsBody } from "./primary_ips.ts";
import { actAndWait } from "./actions.ts";

type LB = Schemas["load_balancer"];

/** What a new balancer is made of. */
export interface CreateRequest {
  /** The balancer's name. */
  name: string;
  /**
   * The labels that say who owns it (besides the user's): the Service's UID, the cluster and the
   * Service's identity (labels.ts), or a shared balancer's record (shared_record.ts).
   */
  owner: Record<string, string>;
  spec: LoadBalancerSpec;
  services: DesiredService[];
  /** Server targets, when there is no label selector. */
  serverIds: number[];
  /** This cluster's label-selector target. */
  selector?: string;
  /** The cluster's network, attached at creation unless a fixed IP or subnet needs its own step. */
  networkId?: number;
}

/** Creates the balancer and waits for it. */
export async function createLoadBalancer(
  client: HcloudClient,
  waiter: ActionWaiter,
  request: CreateRequest,
): Promise<LB> {
  const { spec, services, serverIds: ids, selector, networkId } = request;
  if (!spec.location && !spec.networkZone) {
    throw new TerminalError(
      "no location: set the annotation load-balancer.hetzner.cloud/location or network-zone, or HCLOUD_LOAD_BALANCERS_LOCATION",
    );
  }
  // A fixed private IP or subnet is set by a separate attach after creation.
  const attachOnCreate = networkId !== undefined && !spec.privateIpv4 && !spec.privateSubnetIpRange;
  const body = {
    name: request.name,
    load_balancer_type: spec.type ?? "lb11",
    labels: { ...spec.labels, ...request.owner } as Record<string, string>,
    ...(spec.location ? { location: spec.location } : { network_zone: spec.networkZone }),
    ...(spec.algorithm ? { algorithm: { type: spec.algorithm } } : {}),
    ...(attachOnCreate ? { network: networkId } : {}),
    ...(spec.disablePublicNetwork !== undefined ? { public_interface: !spec.disablePublicNetwork } : {}),
    ...primaryIpsBody(spec),
    services: services as Schemas["load_balancer_service"][],
    targets: !attachOnCreate && spec.usePrivateIp ? [] : selector
      ? [{
        type: "label_selector" as const,
        label_selector: { selector },
        use_private_ip: spec.usePrivateIp,
      }]
      : ids.map((id) => ({ type: "server" as const, server: { id }, use_private_ip: spec.usePrivateIp })),
  };
  let data;
  try {
    data = await client.call("create load balancer", client.api.POST("/load_balancers", { body }));
  } catch (err) {
    if (err instanceof CloudApiError && err.code === "uniqueness_error") {
      throw new Error(await nameTaken(client, request.name), { cause: err });
    }
    throw err;
  }
  await waiter.wait(data.action);
  return data.load_balancer;
}

/**
 * Why a name is taken, naming the holder and the way out (probe P3, P10): the API only says
 * `uniqueness_error`. Retried (the holder may go), but the message says what would end it.
 */
async function nameTaken(client: HcloudClient, name: string): Promise<string> {
  const found = await client.call(
    "find load balancer",
    client.api.GET("/load_balancers", { params: { query: { name } } }),
  ).catch(() => undefined);
  const holder = found?.load_balancers[0];
  const labels = holder?.labels ?? {};
  const whose = !holder
    ? "another load balancer (gone since? retrying)"
    : labels[SHARE_LABEL] !== undefined
    ? `load balancer ${holder.id}, shared by the Services of namespace ${
      labels[SERVICE_NAMESPACE_LABEL] ?? "?"
    } (key "${labels[SHARE_LABEL]}")`
    : labels[SERVICE_NAMESPACE_LABEL] !== undefined
    ? `load balancer ${holder.id}, made for Service ${labels[SERVICE_NAMESPACE_LABEL]}/${
      labels[SERVICE_NAME_LABEL] ?? "?"
    }`
    : labels[SERVICE_UID_LABEL] !== undefined
    ? `load balancer ${holder.id}, made by a CCM for the Service with UID ${labels[SERVICE_UID_LABEL]}`
    : `load balancer ${holder.id}, made outside Kubernetes`;
  return `load balancer name "${name}" is already used by ${whose}; nothing was created. Choose another ` +
    "name with the annotation load-balancer.hetzner.cloud/name (retrying while it is taken)";
}

/**
 * Attaches the balancer to the cluster's network (at the annotated IP or subnet), moving it when the
 * annotated IP changed; other networks are never touched. True when something changed.
 */
export async function reconcileNetwork(
  client: HcloudClient,
  waiter: ActionWaiter,
  lb: LB,
  spec: LoadBalancerSpec,
  networkId: number | undefined,
): Promise<boolean> {
  if (networkId === undefined) return false;
  const api = client.api;
  const path = { params: { path: { id: lb.id } } };
  const current = (lb.private_net ?? []).find((p) => p.network === networkId);
  if (current && spec.privateIpv4 && current.ip !== spec.privateIpv4) {
    await actAndWait(
      client,
      waiter,
      "detach from network",
      api.POST("/load_balancers/{id}/actions/detach_from_network", {
        ...path,
        body: { network: networkId },
      }),
    );
  } else if (current) return false;
  await actAndWait(
    client,
    waiter,
    "attach to network",
    api.POST("/load_balancers/{id}/actions/attach_to_network", {
      ...path,
      body: {
        network: networkId,
        ...(spec.privateIpv4 ? { ip: spec.privateIpv4 } : {}),
        ...(spec.privateSubnetIpRange ? { ip_range: spec.privateSubnetIpRange } : {}),
      },
    }),
  );
  return true;
}
