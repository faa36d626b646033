/**
 * Runs {@link LbAction}s: one typed Hetzner call per kind, each waited for when it returns an
 * action (the balancer stays locked until then).
 *
 * @module
 */
import type { ActionWaiter, HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import type { LbAction } from "./plan.ts";

/** Executes `action` on balancer `id`. */
export async function executeLbAction(
  client: HcloudClient,
  actions: ActionWaiter,
  id: number,
  action: LbAction,
): Promise<void> {
  const api = client.api;
  const path = { params: { path: { id } } };
  const run = (what: string, pending: Promise<{ data?: unknown; error?: unknown; response: Response }>) =>
    actAndWait(client, actions, what, pending);
  switch (action.kind) {
    case "update":
      return await run(
        "update load balancer",
        api.PUT("/load_balancers/{id}", {
          ...path,
          body: { labels: action.labels, ...(action.name ? { name: action.name } : {}) },
        }),
      );
    case "change_dns_ptr":
      return await run(
        "change rDNS",
        api.POST("/load_balancers/{id}/actions/change_dns_ptr", {
          ...path,
          body: { ip: action.ip, dns_ptr: action.dnsPtr },
        }),
      );
    case "change_algorithm":
      return await run(
        "change algorithm",
        api.POST("/load_balancers/{id}/actions/change_algorithm", {
          ...path,
          body: { type: action.algorithm },
        }),
      );
    case "change_type":
      return await run(
        "change type",
        api.POST("/load_balancers/{id}/actions/change_type", {
          ...path,
          body: { load_balancer_type: action.type },
        }),
      );
    case "public_interface":
      return await run(
        "toggle public interface",
        action.enabled
          ? api.POST("/load_balancers/{id}/actions/enable_public_interface", path)
          : api.POST("/load_balancers/{id}/actions/disable_public_interface", path),
      );
    case "delete_service":
      return await run(
        "delete service",
        api.POST("/load_balancers/{id}/actions/delete_service", {
          ...path,
          body: { listen_port: action.listenPort },
        }),
      );
    case "add_service":
      return await run(
        "add service",
        api.POST("/load_balancers/{id}/actions/add_service", {
          ...path,
          body: action.service as Schemas["load_balancer_service"],
        }),
      );
    case "update_service":
      return await run(
        "update service",
        api.POST("/load_balancers/{id}/actions/update_service", {
          ...path,
          body: action.service as Schemas["update_load_balancer_service"],
        }),
      );
    case "remove_target":
      return await run(
        "remove target",
        api.POST("/load_balancers/{id}/actions/remove_target", { ...path, body: action.target }),
      );
    case "add_target":
      return await run(
        "add target",
        api.POST("/load_balancers/{id}/actions/add_target", {
          ...path,
          body: { use_private_ip: false, ...action.target },
        }),
      );
    case "change_protection":
      return await run(
        "change protection",
        api.POST("/load_balancers/{id}/actions/change_protection", {
          ...path,
          body: { delete: action.delete },
        }),
      );
  }
}

/** Sends one request and, when it returns an action, waits until the action finished. */
export async function actAndWait(
  client: HcloudClient,
  waiter: ActionWaiter,
  what: string,
  pending: Promise<{ data?: unknown; error?: unknown; response: Response }>,
): Promise<void> {
  const data = await client.call(what, pending) as { action?: Schemas["action"] | null };
  if (data.action) await waiter.wait(data.action);
}
