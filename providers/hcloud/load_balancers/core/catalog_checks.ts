/**
 * The checks of a Service's balancer against Hetzner's catalog, before any change: known locations,
 * network zones and types (deprecated types warned), and no more ports than the type's services.
 *
 * @module
 */
import type { ProviderWarning } from "../../../provider.ts";
import { TerminalError } from "../../../errors.ts";
import type { Schemas } from "../../../../hcloud_api/mod.ts";
import type { LoadBalancerSpec } from "../spec/mod.ts";
import type { CatalogCache } from "./catalog_cache.ts";
import { quoteValue } from "../../../../lib/quote_value.ts";

type LB = Schemas["load_balancer"];

/** More ports than the balancer type holds is an input error naming the type and its limit. */
export async function checkServiceLimit(
  catalog: CatalogCache,
  spec: LoadBalancerSpec,
  lb: LB | undefined,
  ports: number,
): Promise<void> {
  const name = spec.type ?? lb?.load_balancer_type?.name ?? "lb11";
  const max = (await catalog.get()).loadBalancerTypes.get(name)?.max_services;
  if (max !== undefined && ports > max) {
    throw new TerminalError(
      `${ports} ports to serve, but load balancer type ${name} allows ${max} services: serve fewer ports or ` +
        "choose a larger type with the annotation load-balancer.hetzner.cloud/type",
    );
  }
}

/** Unknown locations, zones and types are input errors; deprecated types a warning. */
export async function checkCatalog(
  catalogCache: CatalogCache,
  spec: LoadBalancerSpec,
  warnings: ProviderWarning[],
): Promise<void> {
  const catalog = await catalogCache.get();
  const errors: string[] = [];
  const known = (
    what: string,
    value: string | undefined,
    set: { has(v: string): boolean },
    name: string,
    env: string,
  ) => {
    if (value !== undefined && !set.has(value)) {
      errors.push(
        `annotation load-balancer.hetzner.cloud/${name}: ${
          quoteValue(value)
        } is not a known ${what} (or set by ${env})`,
      );
    }
  };
  known("location", spec.location, catalog.locations, "location", "HCLOUD_LOAD_BALANCERS_LOCATION");
  known(
    "network zone",
    spec.networkZone,
    catalog.zones,
    "network-zone",
    "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE",
  );
  known("load balancer type", spec.type, catalog.loadBalancerTypes, "type", "HCLOUD_LOAD_BALANCERS_TYPE");
  if (errors.length) throw new TerminalError(errors.join("; "));
  if (spec.type && catalog.loadBalancerTypes.get(spec.type)?.deprecated) {
    warnings.push({
      reason: "LoadBalancerTypeDeprecated",
      message: `load balancer type ${spec.type} is deprecated`,
    });
  }
}
