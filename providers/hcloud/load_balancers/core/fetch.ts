/**
 * One balancer by ID, read again after changes (shared and co-managed balancers): `undefined` once it
 * is gone (deleted outside the CCM meanwhile), never an error for that.
 *
 * @module
 */
import { CloudApiError, type HcloudClient, type Schemas } from "../../../../hcloud_api/mod.ts";

/** The balancer with this ID, or undefined when it no longer exists. */
export async function fetchBalancer(
  client: HcloudClient,
  id: number,
): Promise<Schemas["load_balancer"] | undefined> {
  try {
    return (await client.call(
      "get load balancer",
      client.api.GET("/load_balancers/{id}", { params: { path: { id } } }),
    )).load_balancer;
  } catch (err) {
    if (err instanceof CloudApiError && err.status === 404) return undefined;
    throw err;
  }
}
