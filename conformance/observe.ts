/**
 * Reads a case's state (Nodes, Services, Warning events, and the simulator's load balancers,
 * certificates and routes) and normalizes it as the golden README describes, so that two CCMs'
 * runs of the same case compare field by field. Beyond the README: the kube-system namespace UID
 * (the cluster identity in our labels) reads `<cluster-id>`.
 *
 * @module
 */
import type { Event, Node, Service } from "kubernetes-types/core/v1.d.ts";
import { EVENTS, NAMESPACES, NODES, SERVICES } from "../kube/resources.ts";
import { renderLoadBalancer, targetServerIds } from "../hcloud_sim/lb_model.ts";
import type { LoadBalancer } from "../hcloud_sim/world.ts";
import { mapStrings, type PhaseState } from "./case_file.ts";
import type { CaseEnvironment } from "./case_environment.ts";
import { LB_FINALIZER, SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../kube/well_known.ts";

const NODE_LABEL =
  /^(node\.kubernetes\.io\/instance-type|beta\.kubernetes\.io\/instance-type|topology\.kubernetes\.io\/.*|failure-domain\.beta\.kubernetes\.io\/.*|instance\.hetzner\.cloud\/.*)$/;
const TAINTS = new Set([
  UNINITIALIZED_TAINT,
  SHUTDOWN_TAINT,
]);
const CLEANUP_FINALIZER = LB_FINALIZER;
const DEFAULT_RDNS = /^static\.[\d.]+\.clients\.your-server\.de$/;

/** What one observation read, normalized, plus the informational part. */
export interface Observation {
  state: PhaseState;
  warningMessages: Record<string, string[]>;
}

/**
 * Placeholders that must survive objects going away (a deleted Service's UID in a label, a deleted
 * load balancer's IP in a stale ingress): collected across every observation of a case.
 */
export class Normalizer {
  /** Exact values (IPs, NodePorts) → placeholders. */
  readonly #exact = new Map<string, string>();
  readonly #nodePorts = new Map<number, string>();
  /** Substrings (UIDs, default names) → placeholders. */
  readonly #substrings = new Map<string, string>();

  /** The cluster identity (kube-system namespace UID) that our labels carry. */
  learnClusterId(uid: string): void {
    this.#substrings.set(uid, "<cluster-id>");
  }

  /** Learns the Services' UIDs and NodePorts and the load balancers' IPs. */
  learn(env: CaseEnvironment, services: Service[], lbs: LoadBalancer[]): void {
    for (const [uid, name] of env.seen.serviceUids) {
      this.#substrings.set(("a" + uid.replaceAll("-", "")).slice(0, 32), `<default-name:${name}>`);
      this.#substrings.set(uid, `<uid:${name}>`);
    }
    const annotationValues = new Set<string>();
    for (const svc of services) {
      for (const v of Object.values(svc.metadata?.annotations ?? {})) annotationValues.add(v);
      const name = svc.metadata!.name!;
      for (const p of svc.spec?.ports ?? []) {
        if (p.nodePort) this.#nodePorts.set(p.nodePort, `<nodeport:${name}:${p.port}>`);
      }
      if (svc.spec?.healthCheckNodePort) {
        this.#nodePorts.set(svc.spec.healthCheckNodePort, `<healthchecknodeport:${name}>`);
      }
    }
    for (const lb of lbs) {
      const name = this.text(lb.name);
      if (lb.public_net.ipv4?.ip) this.#exact.set(lb.public_net.ipv4.ip, `<lb:${name}:ipv4>`);
      if (lb.public_net.ipv6?.ip) this.#exact.set(lb.public_net.ipv6.ip, `<lb:${name}:ipv6>`);
      for (const pn of lb.private_net) {
        const network = env.sim.world.networks.get(pn.network!)?.name ?? String(pn.network);
        if (pn.ip && !annotationValues.has(pn.ip)) this.#exact.set(pn.ip, `<lb:${name}:private:${network}>`);
      }
    }
  }

  /** A string with UIDs and default names replaced, or an exact value's placeholder. */
  text(s: string): string {
    const exact = this.#exact.get(s);
    if (exact) return exact;
    let out = s;
    for (const [from, to] of this.#substrings) out = out.replaceAll(from, to);
    return out;
  }

  /** A message: every known value replaced wherever it occurs. */
  message(s: string): string {
    let out = this.text(s);
    for (const [from, to] of this.#exact) out = out.replaceAll(from, to);
    return out;
  }

  /** A port: a NodePort's placeholder, else the number. */
  port(n: number | null | undefined): number | string | null {
    if (n === null || n === undefined) return null;
    return this.#nodePorts.get(n) ?? n;
  }

  /** Every string of a JSON value through {@link text}. */
  deep<T>(value: T): T {
    return mapStrings(value, (s) => this.text(s));
  }
}

/** Reads and normalizes the current state of a case. */
export async function observe(env: CaseEnvironment, norm: Normalizer): Promise<Observation> {
  const [nodes, services, events] = await Promise.all([
    env.client.listAll<Node>(NODES),
    env.client.listAll<Service>(SERVICES),
    env.client.listAll<Event>(EVENTS),
  ]);
  norm.learnClusterId((await env.client.get(NAMESPACES, "kube-system")).metadata!.uid!);
  env.rememberServers();
  for (const s of services.items) env.seen.serviceUids.set(s.metadata!.uid!, s.metadata!.name!);
  const world = env.sim.world;
  const lbs = [...world.loadBalancers.values()].map((lb) => renderLoadBalancer(world, lb));
  norm.learn(env, services.items, lbs);
  const serverName = (id: number) => env.seen.servers.get(id) ?? `<unknown-server:${id}>`;
  for (const c of world.certificates.values()) env.seen.certificates.set(c.id, c.name);

  const state: PhaseState = {
    nodes: nodes.items.map((n) => ({
      name: n.metadata!.name!,
      // No provider ID is recorded as null, as the recordings of HCCM do.
      providerID: n.spec?.providerID
        ? n.spec.providerID.replace(
          /^hcloud:\/\/(\d+)$/,
          (whole, id) =>
            env.seen.servers.has(Number(id)) ? `hcloud://<server:${serverName(Number(id))}>` : whole,
        )
        : null,
      labels: Object.fromEntries(
        Object.entries(n.metadata?.labels ?? {}).filter(([k]) => NODE_LABEL.test(k)).sort(([a], [b]) =>
          a < b ? -1 : 1
        ),
      ),
      taints: (n.spec?.taints ?? []).filter((t) => TAINTS.has(t.key)).map((t) => ({
        key: t.key,
        value: t.value ?? "",
        effect: t.effect,
      })),
      addresses: (n.status?.addresses ?? []).map((a) => ({ type: a.type, address: a.address })),
      networkUnavailable: (() => {
        const c = n.status?.conditions?.find((c) => c.type === "NetworkUnavailable");
        return c ? { status: c.status, reason: c.reason ?? "" } : null;
      })(),
    })).sort(byName),
    services: services.items
      .sort((a, b) => key(a).localeCompare(key(b)))
      .map((s) => ({
        name: s.metadata!.name!,
        type: s.spec?.type ?? "ClusterIP",
        finalizers: (s.metadata?.finalizers ?? []).filter((f) => f === CLEANUP_FINALIZER),
        ingress: (s.status?.loadBalancer?.ingress ?? []).map((i) => {
          const out: Record<string, unknown> = {};
          if (i.ip !== undefined) out.ip = norm.text(i.ip);
          if (i.hostname !== undefined) out.hostname = i.hostname;
          if (i.ipMode !== undefined) out.ipMode = i.ipMode;
          if (i.ports !== undefined) out.ports = i.ports;
          return out;
        }),
      })),
    load_balancers: lbs.map((lb) => loadBalancerState(env, norm, lb, serverName))
      .sort((a, b) => String(a.name).localeCompare(String(b.name))),
    certificates: [...world.certificates.values()].map((c) => ({
      name: c.name,
      type: c.type,
      domain_names: [...c.domain_names].sort(),
      labels: norm.deep(c.labels),
    })).sort(byName),
    routes: Object.fromEntries(
      [...world.networks.values()].sort((a, b) => a.name.localeCompare(b.name)).map((network) => [
        network.name,
        [...network.routes].sort((a, b) => a.destination.localeCompare(b.destination)).map((r) => {
          const server = [...world.servers.values()].find((s) =>
            s.private_net.some((pn) => pn.network === network.id && pn.ip === r.gateway)
          );
          return { destination: r.destination, gateway: server ? `<server:${server.name}>` : r.gateway };
        }),
      ]),
    ),
    warning_events: [],
  };

  const warnings = new Map<string, { kind: string; name: string; reason: string; messages: Set<string> }>();
  for (const e of events.items) {
    const kind = e.involvedObject?.kind ?? "";
    if (e.type !== "Warning" || (kind !== "Node" && kind !== "Service")) continue;
    const name = e.involvedObject.name ?? "";
    const id = `${kind}/${name}/${e.reason ?? ""}`;
    const w = warnings.get(id) ?? { kind, name, reason: e.reason ?? "", messages: new Set<string>() };
    w.messages.add(norm.message(e.message ?? ""));
    warnings.set(id, w);
  }
  const sorted = [...warnings.values()].sort((a, b) =>
    a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name) || a.reason.localeCompare(b.reason)
  );
  state.warning_events = sorted.map(({ kind, name, reason }) => ({ kind, name, reason }));
  const warningMessages = Object.fromEntries(
    sorted.map((w) => [`${w.kind}/${w.name}/${w.reason}`, [...w.messages].sort()]),
  );
  return { state: norm.deep(state), warningMessages };
}

function loadBalancerState(
  env: CaseEnvironment,
  norm: Normalizer,
  lb: LoadBalancer,
  serverName: (id: number) => string,
): Record<string, unknown> {
  const world = env.sim.world;
  const certName = (id: number) => env.seen.certificates.get(id) ?? String(id);
  const rdns = (addr: { ip?: string | null; dns_ptr?: string | null } | null | undefined) =>
    addr?.ip ? (DEFAULT_RDNS.test(addr.dns_ptr ?? "") ? "<default-rdns>" : addr.dns_ptr ?? null) : null;
  return {
    name: lb.name,
    type: lb.load_balancer_type.name,
    location: lb.location.name,
    network_zone: lb.location.network_zone,
    algorithm: lb.algorithm.type,
    labels: lb.labels,
    protection_delete: lb.protection.delete,
    public_interface: lb.public_net.enabled,
    rdns: { ipv4: rdns(lb.public_net.ipv4), ipv6: rdns(lb.public_net.ipv6) },
    private_net: lb.private_net.map((pn) => ({
      network: world.networks.get(pn.network!)?.name ?? String(pn.network),
      ip: pn.ip,
    })),
    services: [...lb.services].sort((a, b) => a.listen_port - b.listen_port).map((s) => ({
      protocol: s.protocol,
      listen_port: s.listen_port,
      destination_port: norm.port(s.destination_port),
      proxyprotocol: s.proxyprotocol,
      http: s.http
        ? {
          cookie_name: s.http.cookie_name ?? null,
          cookie_lifetime: s.http.cookie_lifetime ?? null,
          certificates: (s.http.certificates ?? []).map(certName).sort(),
          redirect_http: s.http.redirect_http ?? null,
          sticky_sessions: s.http.sticky_sessions ?? null,
          timeout_idle: (s.http as { timeout_idle?: number }).timeout_idle ?? null,
        }
        : null,
      health_check: {
        protocol: s.health_check.protocol,
        port: norm.port(s.health_check.port),
        interval: s.health_check.interval,
        timeout: s.health_check.timeout,
        retries: s.health_check.retries,
        http: s.health_check.http
          ? {
            domain: s.health_check.http.domain ?? null,
            path: s.health_check.http.path,
            response: s.health_check.http.response ?? null,
            status_codes: s.health_check.http.status_codes ?? null,
            tls: s.health_check.http.tls ?? null,
          }
          : null,
      },
    })),
    targets: lb.targets.map((t) =>
      t.type === "server"
        ? { type: "server", server: serverName(t.server!.id), use_private_ip: t.use_private_ip ?? false }
        : t.type === "label_selector"
        ? {
          type: "label_selector",
          selector: t.label_selector!.selector,
          use_private_ip: t.use_private_ip ?? false,
        }
        : { type: t.type, ip: t.ip?.ip ?? null }
    ),
    target_servers: targetServerIds(world, lb).map(serverName).sort(),
  };
}

function byName(a: { name?: unknown }, b: { name?: unknown }): number {
  return String(a.name).localeCompare(String(b.name));
}

function key(s: Service): string {
  return `${s.metadata?.namespace}/${s.metadata?.name}`;
}
