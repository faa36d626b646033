/**
 * Locations, network zones and load balancer types, listed at most once per hour (the official
 * CCM caches load balancer types the same way), so annotations can be checked without API calls.
 *
 * @module
 */
import type { HcloudClient } from "../../../../hcloud_api/mod.ts";

/** What the catalog knows. */
export interface Catalog {
  locations: Set<string>;
  zones: Set<string>;
  loadBalancerTypes: Map<
    string,
    { name: string; deprecated: boolean; max_targets?: number; max_services?: number }
  >;
}

/** See the module doc. */
export class CatalogCache {
  #catalog?: { at: number; value: Promise<Catalog> };

  /** A cache over `client`, refreshed after `maxAgeMs` on `now`'s time. */
  constructor(
    private readonly client: HcloudClient,
    private readonly maxAgeMs = 3_600_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The catalog, refreshed when older than the max age (a failed refresh is retried next time). */
  get(): Promise<Catalog> {
    const c = this.#catalog;
    if (c && this.now() - c.at < this.maxAgeMs) return c.value;
    const value = this.#load();
    this.#catalog = { at: this.now(), value };
    value.catch(() => this.#catalog = undefined);
    return value;
  }

  async #load(): Promise<Catalog> {
    const api = this.client.api;
    const [locations, types] = await Promise.all([
      this.client.listAll<{ name: string; network_zone: string }>(
        "list locations",
        "locations",
        (page) => api.GET("/locations", { params: { query: { page, per_page: 50 } } }),
      ),
      this.client.listAll<
        { name: string; deprecated?: string | null; max_targets?: number; max_services?: number }
      >(
        "list load balancer types",
        "load_balancer_types",
        (page) => api.GET("/load_balancer_types", { params: { query: { page, per_page: 50 } } }),
      ),
    ]);
    return {
      locations: new Set(locations.map((l) => l.name)),
      zones: new Set(locations.map((l) => l.network_zone)),
      loadBalancerTypes: new Map(types.map((t) => [t.name, {
        name: t.name,
        deprecated: !!t.deprecated,
        max_targets: t.max_targets,
        max_services: t.max_services,
      }])),
    };
  }
}
