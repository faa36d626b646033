/**
 * The stages of the official CCM's sync of a balancer: which warnings a refused Service still gets
 * depends on the stage that reads the refused value (registry.ts says which reads each).
 *
 * @module
 */

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
