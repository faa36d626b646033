/**
 * Service fields a Hetzner load balancer cannot honour, said out loud instead of silently ignored
 * (as are `load-balancer.hetzner.cloud/` annotations this CCM does not know or implement):
 * `spec.loadBalancerSourceRanges` (a Hetzner balancer has no firewall), `spec.loadBalancerIP` (its
 * address cannot be chosen), and Services that leave it nothing to serve (only UDP/SCTP ports, or
 * `allocateLoadBalancerNodePorts: false`). A new balancer that would serve nothing, or would be
 * public although source ranges ask for less, is not created; an existing one keeps serving (taking
 * down what works today helps no one) and the Service gets a Warning.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { ProviderWarning } from "../../../provider.ts";
import { KNOWN_ANNOTATIONS, type LoadBalancerSpec, PREFIX } from "../spec/mod.ts";

/** The official CCM's annotations (after v1.37) that this CCM does not implement yet. */
/** What the Service asks that cannot be done: warnings, and why a new balancer must not be made. */
export interface FieldVerdict {
  warnings: ProviderWarning[];
  /** Set when a balancer that does not exist yet must not be created. */
  refuseCreate?: string;
}

const OPEN = new Set(["0.0.0.0/0", "::/0"]);
/** The older form of source ranges, which upstream reads when the field is empty. */
export const SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges";

/** Checks the Service's fields; `servedPorts` is how many LB services the Service yields. */
export function checkServiceFields(
  service: Service,
  spec: LoadBalancerSpec,
  servedPorts: number,
): FieldVerdict {
  const warnings: ProviderWarning[] = [];
  let refuseCreate: string | undefined;
  const s = service.spec ?? {};
  // As upstream's GetLoadBalancerSourceRanges: the field, else the annotation (comma-separated).
  const field = (s.loadBalancerSourceRanges ?? []).map((r) => r.trim()).filter(Boolean);
  const fromAnnotation = field.length === 0;
  const ranges = fromAnnotation
    ? (service.metadata?.annotations?.[SOURCE_RANGES_ANNOTATION] ?? "").split(",").map((r) => r.trim())
      .filter(Boolean)
    : field;
  if (ranges.length && !ranges.every((r) => OPEN.has(r))) {
    const shown = ranges.slice(0, 5).map((r) => r.slice(0, 64)).join(", ") +
      (ranges.length > 5 ? `, … (${ranges.length})` : "");
    const what = fromAnnotation ? `annotation ${SOURCE_RANGES_ANNOTATION}` : "spec.loadBalancerSourceRanges";
    const message = `${what} [${shown}] cannot be enforced: Hetzner load balancers have ` +
      "no firewall, so every source can connect";
    if (spec.disablePublicNetwork) {
      warnings.push({
        reason: "UnsupportedLoadBalancerSourceRanges",
        message: `${message} (private network only)`,
      });
    } else {
      warnings.push({ reason: "UnsupportedLoadBalancerSourceRanges", message });
      refuseCreate =
        `${message}; no public balancer is created for it. Remove the ranges, or keep the balancer ` +
        'private with the annotation load-balancer.hetzner.cloud/disable-public-network: "true"';
    }
  }
  for (const key of Object.keys(service.metadata?.annotations ?? {})) {
    if (!key.startsWith(PREFIX)) continue;
    const name = key.slice(PREFIX.length);
    if (!KNOWN_ANNOTATIONS.includes(name)) {
      warnings.push({
        reason: "UnknownAnnotation",
        message: `annotation ${key.slice(0, 120)} is not known and has no effect (a typo?)`,
      });
    }
  }
  if (s.loadBalancerIP) {
    warnings.push({
      reason: "UnsupportedLoadBalancerIP",
      message:
        `spec.loadBalancerIP "${s.loadBalancerIP.slice(0, 64)}" is ignored: Hetzner assigns the balancer's ` +
        "addresses",
    });
  }
  if (servedPorts === 0) {
    const tcp = (s.ports ?? []).filter((p) => (p.protocol ?? "TCP") === "TCP");
    const why = tcp.length === 0
      ? "the Service has no TCP port (Hetzner load balancers serve TCP only)"
      : "spec.allocateLoadBalancerNodePorts is false, so no port has a NodePort to send traffic to";
    warnings.push({ reason: "NothingToServe", message: `the load balancer serves nothing: ${why}` });
    refuseCreate ??= `nothing to serve: ${why}; no balancer is created`;
  }
  return { warnings, refuseCreate };
}
