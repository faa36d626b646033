/**
 * Load balancer services and targets: parsing request bodies (with the API's defaults and error
 * codes) and rendering resolved targets with health status.
 *
 * @module
 */
import type { components } from "../hcloud_api/mod.ts";
import { type BodyReader, faults } from "./http_kit.ts";
import { parseLabelSelector } from "../lib/label_selector.ts";
import type { LoadBalancer, World } from "./world.ts";
import { parseIp } from "../lib/cidr.ts";

type Service = components["schemas"]["load_balancer_service"];
type Target = components["schemas"]["load_balancer_target"];

/**
 * Reads a service from an add_service/update_service body (or `services[i]` of a create). For
 * updates, `base` is the current service and absent fields keep their values. The real API
 * fills defaults the spec does not show (hcloud-go and the official CCM send partial health
 * checks), so only protocol and ports are required.
 */
export function readService(r: BodyReader, body: Record<string, unknown>, base?: Service): Service {
  const s = r.nested(body, "");
  const protocol = (s.string("protocol", {
    required: !base,
    check: (v) => ["tcp", "http", "https"].includes(v) ? undefined : "must be tcp, http or https",
  }) ?? base?.protocol ?? "tcp") as Service["protocol"];
  const port = (v: number) => v >= 1 && v <= 65535 ? undefined : "must be a port between 1 and 65535";
  const defaultListen = protocol === "http" ? 80 : protocol === "https" ? 443 : undefined;
  const listen = s.int("listen_port", { required: !base && defaultListen === undefined, check: port }) ??
    base?.listen_port ??
    defaultListen ?? 0;
  const destination = s.int("destination_port", { required: !base && protocol === "tcp", check: port }) ??
    base?.destination_port ?? 80;
  const proxy = s.bool("proxyprotocol") ?? base?.proxyprotocol ?? false;
  const hc = s.object("health_check") ?? {};
  const h = s.nested(hc, "health_check.");
  const hcProtocol = (h.string("protocol", {
    check: (v) => ["tcp", "http"].includes(v) ? undefined : "must be tcp or http",
  }) ??
    base?.health_check.protocol ?? "tcp") as "tcp" | "http";
  const hcHttp = h.object("http");
  const health: Service["health_check"] = {
    protocol: hcProtocol,
    port: h.int("port", { check: port }) ?? base?.health_check.port ?? destination,
    interval:
      h.int("interval", { check: (v) => v >= 3 && v <= 60 ? undefined : "must be between 3 and 60" }) ??
        base?.health_check.interval ?? 15,
    timeout: h.int("timeout", { check: (v) => v >= 1 && v <= 60 ? undefined : "must be between 1 and 60" }) ??
      base?.health_check.timeout ?? 10,
    retries: h.int("retries", { check: (v) => v >= 0 && v <= 5 ? undefined : "must be between 0 and 5" }) ??
      base?.health_check.retries ?? 3,
  };
  if (hcProtocol === "http") {
    const prev = base?.health_check.http;
    health.http = {
      domain: (hcHttp?.domain as string | null | undefined) ?? prev?.domain ?? null,
      path: (hcHttp?.path as string | undefined) ?? prev?.path ?? "/",
      response: (hcHttp?.response as string | undefined) ?? prev?.response ?? "",
      status_codes: (hcHttp?.status_codes as string[] | undefined) ?? prev?.status_codes ?? ["2??", "3??"],
      tls: (hcHttp?.tls as boolean | undefined) ?? prev?.tls ?? false,
    };
  }
  s.absorb(h);
  const service: Service = {
    protocol,
    listen_port: listen,
    destination_port: destination,
    proxyprotocol: proxy,
    health_check: health,
  };
  if (protocol !== "tcp") {
    const http = s.object("http") ?? {};
    const prev = base?.http;
    service.http = {
      cookie_name: (http.cookie_name as string | undefined) ?? prev?.cookie_name ?? "HCLBSTICKY",
      cookie_lifetime: (http.cookie_lifetime as number | undefined) ?? prev?.cookie_lifetime ?? 300,
      certificates: (http.certificates as number[] | undefined) ?? prev?.certificates ?? [],
      redirect_http: (http.redirect_http as boolean | undefined) ?? prev?.redirect_http ?? false,
      sticky_sessions: (http.sticky_sessions as boolean | undefined) ?? prev?.sticky_sessions ?? false,
      timeout_idle: (http.timeout_idle as number | undefined) ??
        (prev as { timeout_idle?: number })?.timeout_idle,
    } as Service["http"];
  }
  r.absorb(s);
  return service;
}

/** Adds a service, enforcing unique listen ports and the type's service limit. */
export function addService(world: World, lb: LoadBalancer, service: Service): void {
  if (lb.services.some((s) => s.listen_port === service.listen_port)) {
    throw faults.code(422, "source_port_already_used", `listen port ${service.listen_port} is already used`);
  }
  if (lb.services.length >= lb.load_balancer_type.max_services) {
    throw faults.code(403, "resource_limit_exceeded", "service limit of the load balancer type reached", {
      limits: [{ name: "services" }],
    });
  }
  checkServiceSet(world, lb, [...lb.services, service]);
  lb.services.push(service);
}

/** Replaces the service on `service.listen_port`, as update_service does. */
export function replaceService(world: World, lb: LoadBalancer, index: number, service: Service): void {
  const next = lb.services.map((s, i) => i === index ? service : s);
  checkServiceSet(world, lb, next);
  lb.services[index] = service;
}

/**
 * What the API enforces across a balancer's services: certificates exist and fit the type's
 * `max_assigned_certificates`; `redirect_http` only on https ("Only available if protocol is
 * https"), and a redirect answers port 80, so no other service may listen there (the API's
 * `source_port_already_used`, "port 80 is busy, redirect_http is enabled on another service", as
 * the official CCM's users have reported it: HCCM #291, #916).
 */
function checkServiceSet(world: World, lb: LoadBalancer, services: Service[]): void {
  const certificates = new Set<number>();
  for (const service of services) {
    for (const id of service.http?.certificates ?? []) {
      if (!world.certificates.has(id)) {
        throw faults.invalid({ "http.certificates": [`certificate ${id} not found`] });
      }
      certificates.add(id);
    }
    if (service.http?.redirect_http && service.protocol !== "https") {
      throw faults.invalid({ "http.redirect_http": ["only available if protocol is https"] });
    }
  }
  const max = lb.load_balancer_type.max_assigned_certificates;
  if (max !== undefined && certificates.size > max) {
    throw faults.code(403, "resource_limit_exceeded", "certificate limit of the load balancer type reached", {
      limits: [{ name: "certificates" }],
    });
  }
  const redirecting = services.some((s) => s.http?.redirect_http);
  if (redirecting && services.some((s) => s.listen_port === 80)) {
    throw faults.code(
      422,
      "source_port_already_used",
      "port 80 is busy, redirect_http is enabled on another service",
    );
  }
}

/** Reads a target body (`add_target`, `remove_target`, `targets[i]`). */
export function readTarget(r: BodyReader, body: Record<string, unknown>): Target {
  const t = r.nested(body, "");
  const type = t.string("type", {
    required: true,
    check: (v) =>
      ["server", "label_selector", "ip"].includes(v) ? undefined : "must be server, label_selector or ip",
  }) as Target["type"];
  const target: Target = { type, use_private_ip: false };
  if (type === "server") {
    const id = t.nested(t.object("server", { required: true }) ?? {}, "server.").int("id", {
      required: true,
    });
    target.server = { id: id ?? 0 };
  } else if (type === "label_selector") {
    const sel = t.object("label_selector", { required: true });
    const selector = t.nested(sel ?? {}, "label_selector.").string("selector", {
      required: true,
      check: (v) => {
        try {
          parseLabelSelector(v);
          return undefined;
        } catch (err) {
          return (err as Error).message;
        }
      },
    });
    target.label_selector = { selector: selector ?? "" };
  } else if (type === "ip") {
    const ip = t.nested(t.object("ip", { required: true }) ?? {}, "ip.").string("ip", {
      required: true,
      check: (v) => parseIp(v) ? undefined : "is not an IP address",
    });
    target.ip = { ip: ip ?? "" };
  }
  const usePrivate = t.bool("use_private_ip");
  if (usePrivate && type === "ip") t.fail("use_private_ip", "is not allowed for ip targets");
  target.use_private_ip = usePrivate ?? false;
  r.absorb(t);
  return target;
}

/** Same target identity (type + server / selector / ip). */
export function sameTarget(a: Target, b: Target): boolean {
  return a.type === b.type && a.server?.id === b.server?.id &&
    a.label_selector?.selector === b.label_selector?.selector &&
    a.ip?.ip === b.ip?.ip;
}

/** Adds a target with the API's checks (existence, zone, private network, duplicates, limits). */
export function addTarget(world: World, lb: LoadBalancer, target: Target): void {
  if (lb.targets.some((t) => sameTarget(t, target))) {
    throw faults.code(422, "target_already_defined", "target is already defined");
  }
  if (target.type === "server") {
    const server = world.servers.get(target.server!.id);
    if (!server) throw faults.invalid({ "server.id": ["server not found"] });
    if (server.location.network_zone !== lb.location.network_zone) {
      throw faults.code(
        422,
        "unsupported_error",
        "servers and load balancers needs to be in the same network zone, cross network zone is not supported",
      );
    }
  }
  if (
    target.type === "ip" && [...world.servers.values()].some((s) => s.public_net.ipv4?.ip === target.ip!.ip)
  ) {
    throw faults.code(
      422,
      "cloud_resource_ip_not_allowed",
      "IP belongs to a cloud resource; use a server target",
    );
  }
  if (target.use_private_ip) {
    if (lb.private_net.length === 0) {
      throw faults.code(
        422,
        "load_balancer_not_attached_to_network",
        "load balancer is not attached to a network",
      );
    }
    if (target.type === "server") {
      const server = world.servers.get(target.server!.id)!;
      if (!server.private_net.some((p) => lb.private_net.some((l) => l.network === p.network))) {
        throw faults.code(
          422,
          "server_not_attached_to_network",
          "server is not attached to the load balancer's network",
        );
      }
    }
  }
  if (target.type !== "label_selector" && targetCount(world, lb) >= lb.load_balancer_type.max_targets) {
    throw faults.code(403, "resource_limit_exceeded", "target limit of the load balancer type reached", {
      limits: [{ name: "targets" }],
    });
  }
  lb.targets.push(target);
}

/**
 * How targets count against `max_targets` (a choice, see docs/explanation/simulator.md): server and IP targets count
 * one each; servers resolved by label selectors fill what is left, lowest server ID first, each
 * server once. A selector is never refused (servers can be labelled at any time); the servers it
 * matches beyond the limit receive no traffic and are not listed.
 */
export function targetCount(world: World, lb: LoadBalancer): number {
  return directTargetCount(lb) + resolveSelectors(world, lb).count;
}

/** Server and IP targets: what a type change must leave room for (selectors just resolve fewer). */
export function directTargetCount(lb: LoadBalancer): number {
  return lb.targets.filter((t) => t.type !== "label_selector").length;
}

/** Servers each label-selector target resolves, within what the type's limit leaves. */
function resolveSelectors(
  world: World,
  lb: LoadBalancer,
): { byTarget: Map<number, number[]>; count: number } {
  const direct = new Set(lb.targets.filter((t) => t.type === "server").map((t) => t.server!.id));
  let room = lb.load_balancer_type.max_targets - directTargetCount(lb);
  const taken = new Set<number>();
  const out = new Map<number, number[]>();
  lb.targets.forEach((t, index) => {
    if (t.type !== "label_selector") return;
    const selector = parseLabelSelector(t.label_selector!.selector);
    const ids = [...world.servers.values()]
      .filter((s) => selector.matches(s.labels) && s.location.network_zone === lb.location.network_zone)
      .map((s) => s.id)
      .sort((a, b) => a - b);
    const mine: number[] = [];
    for (const id of ids) {
      if (direct.has(id) || taken.has(id)) {
        mine.push(id);
        continue;
      }
      if (room <= 0) continue;
      room--;
      taken.add(id);
      mine.push(id);
    }
    out.set(index, mine);
  });
  return { byTarget: out, count: taken.size };
}

/** The LB as the API shows it: label-selector targets resolved, health per service port. */
export function renderLoadBalancer(world: World, lb: LoadBalancer): LoadBalancer {
  // Per port when the data path checks it (data_path.ts), else as a test set it, else healthy.
  const health = (server?: number) =>
    lb.services.map((s) => ({
      listen_port: s.listen_port,
      status: (server !== undefined &&
        (world.targetHealth.get(`${lb.id}:${server}:${s.listen_port}`) ??
          world.targetHealth.get(`${lb.id}:${server}`))) || "healthy",
    }));
  const out = structuredClone(lb);
  const resolved = resolveSelectors(world, lb).byTarget;
  out.targets = lb.targets.map((t, index) => {
    if (t.type === "label_selector") {
      return {
        ...t,
        targets: (resolved.get(index) ?? []).map((id) => ({
          type: "server",
          server: { id },
          health_status: health(id),
          use_private_ip: t.use_private_ip,
        })),
      };
    }
    return { ...t, health_status: health(t.type === "server" ? t.server?.id : undefined) };
  });
  return out;
}

/** Server IDs the load balancer really targets (server targets plus resolved label selectors). */
export function targetServerIds(world: World, lb: LoadBalancer): number[] {
  const ids = renderLoadBalancer(world, lb).targets.flatMap((t) =>
    t.type === "server"
      ? [t.server!.id]
      : t.type === "label_selector"
      ? (t.targets ?? []).map((x) => x.server!.id)
      : []
  );
  return [...new Set(ids)].sort((a, b) => a - b);
}
