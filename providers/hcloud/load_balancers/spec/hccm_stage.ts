/**
 * The annotations the official CCM reads (plus ours), and the stage of its sync in which it reads
 * each: which warnings a refused Service still gets depends on it (annotations.ts, conformance).
 *
 * @module
 */

/** Every annotation name (without prefix), in the official CCM's documentation order. */
export const ANNOTATIONS = [
  "name",
  "location",
  "network-zone",
  "type",
  "algorithm-type",
  "disable-public-network",
  "ipv6-disabled",
  "disable-private-ingress",
  "use-private-ip",
  "private-ipv4",
  "private-subnet-ip-range",
  "hostname",
  "protocol",
  "uses-proxyprotocol",
  "node-selector",
  "http-cookie-name",
  "http-cookie-lifetime",
  "http-timeout-idle",
  "certificate-type",
  "http-certificates",
  "http-managed-certificate-name",
  "http-managed-certificate-domains",
  "http-managed-certificate-acme-staging",
  "http-redirect-http",
  "http-sticky-sessions",
  "health-check-protocol",
  "health-check-port",
  "health-check-interval",
  "health-check-timeout",
  "health-check-retries",
  "health-check-http-domain",
  "health-check-http-path",
  "health-check-http-validate-certificate",
  "health-check-http-status-codes",
  "http-status-codes",
  "ipv4-rdns",
  "ipv6-rdns",
  "protection-delete",
  "adopt-existing",
  "public-net-ipv4",
  "public-net-ipv6",
  "attach-to",
  "ipv4",
  "ipv6",
  "id",
] as const;

/** Known annotation names (without prefix), for documentation and unknown-annotation warnings. */
export const KNOWN_ANNOTATIONS: readonly string[] = ANNOTATIONS;

/**
 * The stages of the official CCM's sync of a balancer (`hcloud/load_balancers.go` EnsureLoadBalancer,
 * `internal/hcops/load_balancer.go`), in order. It reads each annotation where it uses it, so a value
 * it refuses ends the sync in that stage, after what the earlier stages did and said. Ours checks
 * every value before the first cloud call; the stage of the earliest refused value decides which
 * warnings still come with the failure, as they would from HCCM.
 */
export enum HccmStage {
  /** Parsed before anything else. */
  NodeSelector = 0,
  /** Creation: the type is resolved (and warned about) first, then location, algorithm, public net. */
  Create = 1,
  /** The balancer's own settings: name, reverse DNS, algorithm, type, network, public interface. */
  Balancer = 2,
  /** The services, port by port (a non-TCP port is reported as it is reached). */
  Services = 3,
  /** The targets. */
  Targets = 4,
  /** The ingress written to the Service. */
  Ingress = 5,
}

/** Where HCCM reads each annotation (ours only: where it would matter to HCCM's order). */
export const HCCM_STAGE: Record<(typeof ANNOTATIONS)[number], HccmStage> = {
  "node-selector": HccmStage.NodeSelector,
  "attach-to": HccmStage.NodeSelector,
  name: HccmStage.Create,
  location: HccmStage.Create,
  "network-zone": HccmStage.Create,
  type: HccmStage.Create,
  "algorithm-type": HccmStage.Create,
  "disable-public-network": HccmStage.Create,
  "adopt-existing": HccmStage.Create,
  "public-net-ipv4": HccmStage.Create,
  "public-net-ipv6": HccmStage.Create,
  "ipv4-rdns": HccmStage.Balancer,
  "ipv6-rdns": HccmStage.Balancer,
  "private-ipv4": HccmStage.Balancer,
  "private-subnet-ip-range": HccmStage.Balancer,
  "protection-delete": HccmStage.Balancer,
  protocol: HccmStage.Services,
  "uses-proxyprotocol": HccmStage.Services,
  "http-cookie-name": HccmStage.Services,
  "http-cookie-lifetime": HccmStage.Services,
  "http-timeout-idle": HccmStage.Services,
  "certificate-type": HccmStage.Services,
  "http-certificates": HccmStage.Services,
  "http-managed-certificate-name": HccmStage.Services,
  "http-managed-certificate-domains": HccmStage.Services,
  "http-managed-certificate-acme-staging": HccmStage.Services,
  "http-redirect-http": HccmStage.Services,
  "http-sticky-sessions": HccmStage.Services,
  "health-check-protocol": HccmStage.Services,
  "health-check-port": HccmStage.Services,
  "health-check-interval": HccmStage.Services,
  "health-check-timeout": HccmStage.Services,
  "health-check-retries": HccmStage.Services,
  "health-check-http-domain": HccmStage.Services,
  "health-check-http-path": HccmStage.Services,
  "health-check-http-validate-certificate": HccmStage.Services,
  "health-check-http-status-codes": HccmStage.Services,
  "http-status-codes": HccmStage.Services,
  "use-private-ip": HccmStage.Targets,
  hostname: HccmStage.Ingress,
  "ipv6-disabled": HccmStage.Ingress,
  "disable-private-ingress": HccmStage.Ingress,
  ipv4: HccmStage.Ingress,
  ipv6: HccmStage.Ingress,
  id: HccmStage.Ingress,
};

/** The stage of the earliest annotation in `invalid` (undefined: none refused). */
export function earliestStage(invalid: Iterable<string>): HccmStage | undefined {
  let earliest: HccmStage | undefined;
  for (const name of invalid) {
    const stage = HCCM_STAGE[name as keyof typeof HCCM_STAGE] ?? HccmStage.Services;
    if (earliest === undefined || stage < earliest) earliest = stage;
  }
  return earliest;
}
