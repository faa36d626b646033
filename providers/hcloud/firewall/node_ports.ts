/**
 * NodePort Services that open their NodePorts in the cluster's firewall (opt-in twice): the operator
 * names the namespaces allowed (`HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES`), the Service
 * asks with `service.deno-ccm.io/firewall-open-nodeports: "true"`. Its NodePorts are opened from the
 * ranges of `service.deno-ccm.io/firewall-source-ranges`, or from everywhere without it: the Nodes
 * see the client's address on a NodePort, so the ranges are enforced there. (Ours, because the
 * apiserver refuses `spec.loadBalancerSourceRanges` and its annotation form on any Service not of
 * type LoadBalancer.)
 *
 * Bad input changes nothing for anyone: a Service that asks without its namespace being allowed, or
 * with a range that is not a CIDR, a protocol the firewall cannot filter, or too many ranges, is
 * refused with a message naming the field and value, and its rules are not written (the other
 * Services' are). Services are taken oldest first, so a new Service can never push an older one's
 * rules out of a full firewall.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { parseCidr } from "../../../lib/cidr.ts";
import { parseGoBool } from "../../../lib/go_bool.ts";
import { quoteValue } from "../../../lib/quote_value.ts";
import { FIREWALL_NODEPORTS_ANNOTATION, FIREWALL_SOURCE_RANGES_ANNOTATION } from "../names.ts";
import { SOURCES_PER_RULE } from "./rules.ts";

/** What one Service opens: each NodePort from every source range. */
export interface NodePortOpening {
  /** `namespace/name`. */
  service: string;
  /** The NodePorts and their protocols. */
  ports: { protocol: "tcp" | "udp"; port: number }[];
  /** Source CIDRs, canonical. */
  sources: string[];
}

/** A Service whose request was not taken, and why (names the field and the value). */
export interface Refusal {
  /** `namespace/name`. */
  service: string;
  /** What is wrong, for a Warning event on the Service. */
  message: string;
}

/** Every source when the Service names none. */
const EVERYWHERE = ["0.0.0.0/0", "::/0"];

/**
 * Whether the Service carries the annotation at all (whatever its value): its changes concern the
 * firewall, and a value that is not a boolean is refused with a message.
 */
export function asksForNodePorts(service: Service): boolean {
  return service.metadata?.annotations?.[FIREWALL_NODEPORTS_ANNOTATION] !== undefined;
}

/**
 * The openings the Services ask for, oldest first, and the requests refused. `allowed`: the
 * namespaces whose Services may open NodePorts (`"*"`: all; none when undefined or empty).
 */
export function nodePortOpenings(
  services: Iterable<Service>,
  allowed: "*" | readonly string[] | undefined,
): { openings: NodePortOpening[]; refused: Refusal[] } {
  const asking = [...services].filter((s) => asksForNodePorts(s) && !s.metadata?.deletionTimestamp)
    .sort((a, b) =>
      (a.metadata?.creationTimestamp ?? "").localeCompare(b.metadata?.creationTimestamp ?? "") ||
      nameOf(a).localeCompare(nameOf(b))
    );
  const openings: NodePortOpening[] = [];
  const refused: Refusal[] = [];
  for (const service of asking) {
    const value = service.metadata!.annotations![FIREWALL_NODEPORTS_ANNOTATION];
    const asks = parseGoBool(value);
    if (asks === undefined) {
      refused.push({
        service: nameOf(service),
        message: `${FIREWALL_NODEPORTS_ANNOTATION}: ${quoteValue(value)} is not true or false; ` +
          "the firewall opens nothing for this Service",
      });
    }
    if (!asks) continue;
    const result = opening(service, allowed);
    if ("message" in result) refused.push(result);
    else if (result.ports.length) openings.push(result);
  }
  return { openings, refused };
}

function nameOf(service: Service): string {
  return `${service.metadata?.namespace ?? "default"}/${service.metadata?.name ?? ""}`;
}

function opening(service: Service, allowed: "*" | readonly string[] | undefined): NodePortOpening | Refusal {
  const name = nameOf(service);
  const namespace = service.metadata?.namespace ?? "default";
  const refuse = (message: string): Refusal => ({
    service: name,
    message: `${FIREWALL_NODEPORTS_ANNOTATION}: ${message}; the firewall opens nothing for this Service`,
  });
  if (allowed !== "*" && !(allowed ?? []).includes(namespace)) {
    return refuse(
      `namespace ${namespace} may not open NodePorts in the cluster's firewall ` +
        "(the operator's HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES)",
    );
  }
  if (service.spec?.type !== "NodePort") {
    return refuse(
      `only NodePort Services open their NodePorts (this one is ${
        quoteValue(service.spec?.type ?? "ClusterIP")
      }` +
        "; a LoadBalancer Service's are opened to its balancer)",
    );
  }
  const field = FIREWALL_SOURCE_RANGES_ANNOTATION;
  const raw = (service.metadata?.annotations?.[FIREWALL_SOURCE_RANGES_ANNOTATION] ?? "").split(",").map((r) =>
    r.trim()
  )
    .filter(Boolean);
  const sources: string[] = [];
  for (const range of raw) {
    const cidr = parseCidr(range);
    if (!cidr) return refuse(`${field} holds ${quoteValue(range)}, which is not a CIDR range`);
    sources.push(cidr.text);
  }
  const unique = sources.length ? [...new Set(sources)].sort() : EVERYWHERE;
  if (unique.length > SOURCES_PER_RULE) {
    return refuse(
      `${field} holds ${unique.length} ranges; a firewall rule takes at most ${SOURCES_PER_RULE}`,
    );
  }
  const ports: NodePortOpening["ports"] = [];
  for (const p of service.spec?.ports ?? []) {
    if (!p.nodePort) continue;
    const protocol = (p.protocol ?? "TCP").toLowerCase();
    if (protocol !== "tcp" && protocol !== "udp") {
      return refuse(
        `port ${p.nodePort} uses ${
          quoteValue(p.protocol ?? "")
        }; a Cloud Firewall filters only TCP and UDP by port`,
      );
    }
    ports.push({ protocol, port: p.nodePort });
  }
  return { service: name, ports, sources: unique };
}
