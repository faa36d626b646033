/**
 * The routes the cluster's Nodes want: one per Node and IPv4 pod CIDR, through the Node's InternalIP.
 * A Node the provider cannot route (`Routes.unroutable`) and a Node's IPv6 range (Hetzner's network
 * routes are IPv4 only) get none, and are told so once (a Node event each run was an apiserver write
 * per such Node every few seconds); what was told of Nodes that are gone is forgotten.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { NODES } from "../../kube/resources.ts";
import { parseCidr } from "../../lib/cidr.ts";
import { podCidrs } from "../node_metadata.ts";

/** One wanted route: the Node, its pod CIDR (canonical) and its InternalIP (the gateway). */
export interface Wanted {
  node: Node;
  cidr: string;
  gateway?: string;
}

/** See the module doc. */
export class RouteWants {
  readonly #recorder: EventRecorder;
  readonly #unroutable?: (node: Node) => string | undefined;
  /** Nodes (UIDs) already told why they get no route. */
  readonly #toldUnroutable = new Set<string>();
  /** IPv6 pod CIDRs already told they get no route (`uid|cidr`). */
  readonly #toldIpv6 = new Set<string>();

  /** `unroutable`: the provider's reason a Node gets no route (see `Routes.unroutable`). */
  constructor(recorder: EventRecorder, unroutable?: (node: Node) => string | undefined) {
    this.#recorder = recorder;
    this.#unroutable = unroutable;
  }

  /** The routes `nodes` (the cloud's) want; `all`: every Node, to forget what was told of gone ones. */
  of(nodes: Node[], all: Node[]): Wanted[] {
    const uids = new Set(all.map((n) => n.metadata?.uid));
    for (const uid of this.#toldUnroutable) if (!uids.has(uid)) this.#toldUnroutable.delete(uid);
    for (const told of this.#toldIpv6) if (!uids.has(told.split("|")[0])) this.#toldIpv6.delete(told);
    const wanted: Wanted[] = [];
    for (const node of nodes) {
      const unroutable = this.#unroutable?.(node);
      if (unroutable) {
        if (!this.#toldUnroutable.has(node.metadata!.uid!)) {
          this.#toldUnroutable.add(node.metadata!.uid!);
          this.#recorder.event(
            NODES,
            node,
            "Normal",
            "RouteSkipped",
            `No route for this Node: ${unroutable}`,
          );
        }
        continue;
      }
      for (const cidr of podCidrs(node)) {
        const parsed = parseCidr(cidr);
        if (!parsed) continue;
        if (parsed.family === 6) {
          const told = `${node.metadata!.uid}|${parsed.text}`;
          if (this.#toldIpv6.has(told)) continue;
          this.#toldIpv6.add(told);
          this.#recorder.event(
            NODES,
            node,
            "Normal",
            "IPv6RouteSkipped",
            `Pod CIDR ${cidr} is IPv6; Hetzner network routes are IPv4 only`,
          );
          continue;
        }
        wanted.push({ node, cidr: parsed.text, gateway: internalIp(node) });
      }
    }
    return wanted;
  }
}

/** The Node's IPv4 InternalIP, the gateway of its routes. */
export function internalIp(node: Node): string | undefined {
  return (node.status?.addresses ?? []).find((a) => a.type === "InternalIP" && !a.address.includes(":"))
    ?.address;
}
