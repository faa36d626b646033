/**
 * The simulator's data path (opt-in, for tests, benchmarks and the demo): every balancer service
 * listens on a loopback address and its listen port, health-checks its targets as configured
 * (protocol, port, path, domain, status codes, interval, timeout, retries), and forwards each
 * connection to a healthy target chosen by the balancer's algorithm, with a PROXY protocol v1
 * header when configured. Targets are reached at per-server loopback addresses, where tests run
 * the Node-side endpoints (testing/kube_proxy.ts: a real kube-proxy per Node). Health is what the API shows in
 * `targets[].health_status`.
 *
 * The model, where Hetzner's documentation leaves it open: a target is unhealthy after `retries + 1`
 * failed checks in a row and healthy after one that passes; only healthy targets get connections
 * (a new target is `unknown` until its first check); a target removed from the balancer loses its
 * open connections at once; `http` and `https` services are forwarded as TCP (no HTTP or TLS
 * termination). The checks themselves are in health_probe.ts (TLS included).
 *
 * Cloud Firewalls apply (firewall_model.ts): a balancer reaching a target on its public address
 * does so from its public IPv4, so its checks and connections pass only where a firewall applied
 * to the target's server allows that address on that port (a blocked check fails, a blocked
 * connection is dropped); through the Network (`use_private_ip`) nothing is filtered. A client
 * outside can be played with {@link DataPath.connectFrom}: it reaches a server's public address
 * only where its firewalls let that client's address in.
 *
 * @module
 */
import type { LoadBalancer, World } from "./world.ts";
import { targetServerIds } from "./lb_model.ts";
import { probe } from "./health_probe.ts";
import { allowsInbound, firewallsOf } from "./firewall_model.ts";

/**
 * Whether balancer `lb`'s traffic reaches `port` of server `serverId`: through the Network it is
 * not filtered; on the public interface the server's firewalls must allow the balancer's IPv4.
 */
export function balancerReaches(world: World, lb: LoadBalancer, serverId: number, port: number): boolean {
  if (lb.targets.some((t) => t.use_private_ip)) return true;
  const source = lb.public_net.ipv4?.ip;
  // Without a public IPv4 it has no public source address: it gets through only where nothing filters.
  if (!source) return firewallsOf(world, serverId).length === 0;
  return allowsInbound(world, serverId, { protocol: "tcp", source, port });
}

/** Where things listen. */
export interface DataPathOptions {
  /** The loopback address a server's Node-side endpoints listen on. */
  serverAddress(serverId: number): string;
  /** How often listeners and targets follow the balancers (ms). */
  reconcileMs?: number;
}

/** The loopback address balancer `id` listens on: 127.77.x.y. */
export function balancerAddress(id: number): string {
  return `127.77.${(id >> 8) & 255}.${id & 255}`;
}

type Service = LoadBalancer["services"][number];
type Status = "healthy" | "unhealthy" | "unknown";

/** One balancer service: its listener, targets' health and open connections. */
class ServicePath {
  readonly #listener: Deno.TcpListener;
  readonly #health = new Map<
    number,
    { status: Status; failures: number; timer?: ReturnType<typeof setTimeout>; check: string }
  >();
  readonly #open = new Map<number, Set<() => void>>();
  #next = 0;
  /** Connections refused for want of a healthy target, dropped by a target's firewall, and forwarded. */
  refused = 0;
  dropped = 0;
  forwarded = 0;

  constructor(
    readonly world: World,
    readonly lbId: number,
    readonly listenPort: number,
    readonly opts: DataPathOptions,
  ) {
    this.#listener = Deno.listen({ hostname: balancerAddress(lbId), port: listenPort });
    this.#accept();
  }

  #service(): { lb: LoadBalancer; svc: Service } | undefined {
    const lb = this.world.loadBalancers.get(this.lbId);
    const svc = lb?.services.find((s) => s.listen_port === this.listenPort);
    return lb && svc ? { lb, svc } : undefined;
  }

  /** Follows the balancer: targets added get checks, removed ones lose their connections. */
  reconcile(targets: number[]): void {
    const found = this.#service();
    if (!found) return;
    const check = JSON.stringify(found.svc.health_check);
    for (const id of targets) {
      const h = this.#health.get(id);
      if (h && h.check === check) continue;
      if (h) clearTimeout(h.timer);
      const state = { status: (h?.status ?? "unknown") as Status, failures: 0, check, timer: undefined };
      this.#health.set(id, state);
      this.#publish(id, state.status);
      this.#schedule(id, 0);
    }
    for (const id of [...this.#health.keys()]) {
      if (targets.includes(id)) continue;
      clearTimeout(this.#health.get(id)!.timer);
      this.#health.delete(id);
      this.world.targetHealth.delete(this.#key(id));
      for (const cut of this.#open.get(id) ?? []) cut();
      this.#open.delete(id);
    }
  }

  #key(serverId: number): string {
    return `${this.lbId}:${serverId}:${this.listenPort}`;
  }

  #publish(serverId: number, status: Status): void {
    this.world.targetHealth.set(this.#key(serverId), status);
  }

  #schedule(serverId: number, ms: number): void {
    const h = this.#health.get(serverId);
    if (!h) return;
    h.timer = setTimeout(async () => {
      const found = this.#service();
      const state = this.#health.get(serverId);
      if (!found || state !== h) return;
      const hc = found.svc.health_check;
      // A check the server's firewall drops fails (as a real one times out).
      const ok = balancerReaches(this.world, found.lb, serverId, hc.port) &&
        await probe(this.opts.serverAddress(serverId), hc);
      if (this.#health.get(serverId) !== h) return;
      if (ok) [h.status, h.failures] = ["healthy", 0];
      else if (++h.failures > (hc.retries ?? 3)) h.status = "unhealthy";
      this.#publish(serverId, h.status);
      this.#schedule(serverId, (hc.interval ?? 15) * 1000);
    }, ms);
  }

  async #accept(): Promise<void> {
    for await (const conn of this.#listener) this.#forward(conn).catch(() => {});
  }

  async #forward(conn: Deno.TcpConn): Promise<void> {
    const found = this.#service();
    const healthy = [...this.#health].filter(([, h]) => h.status === "healthy").map(([id]) => id);
    if (!found || !healthy.length) {
      this.refused++;
      conn.close();
      return;
    }
    const least = found.lb.algorithm?.type === "least_connections";
    const target = least
      ? healthy.reduce((a, b) => ((this.#open.get(b)?.size ?? 0) < (this.#open.get(a)?.size ?? 0) ? b : a))
      : healthy[this.#next++ % healthy.length];
    let upstream: Deno.TcpConn;
    if (!balancerReaches(this.world, found.lb, target, found.svc.destination_port)) {
      this.dropped++;
      conn.close();
      return;
    }
    try {
      upstream = await Deno.connect({
        hostname: this.opts.serverAddress(target),
        port: found.svc.destination_port,
      });
    } catch {
      conn.close();
      return;
    }
    this.forwarded++;
    const open = this.#open.get(target) ?? new Set();
    this.#open.set(target, open);
    let closed = false;
    const cut = () => {
      if (closed) return;
      closed = true;
      open.delete(cut);
      for (const c of [conn, upstream]) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
    };
    open.add(cut);
    if (found.svc.proxyprotocol) {
      const client = conn.remoteAddr as Deno.NetAddr;
      const header = `PROXY TCP4 ${client.hostname} ${
        balancerAddress(this.lbId)
      } ${client.port} ${this.listenPort}\r\n`;
      await upstream.write(new TextEncoder().encode(header));
    }
    await Promise.allSettled([
      conn.readable.pipeTo(upstream.writable),
      upstream.readable.pipeTo(conn.writable),
    ]);
    cut();
  }

  close(): void {
    for (const h of this.#health.values()) clearTimeout(h.timer);
    for (const cuts of this.#open.values()) for (const cut of cuts) cut();
    for (const id of this.#health.keys()) this.world.targetHealth.delete(this.#key(id));
    try {
      this.#listener.close();
    } catch { /* already closed */ }
  }
}

/** Every balancer service's data path, following the simulated world. */
export class DataPath {
  readonly #paths = new Map<string, ServicePath>();
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(readonly world: World, readonly opts: DataPathOptions) {
    this.#timer = setInterval(() => this.reconcile(), opts.reconcileMs ?? 200);
    this.reconcile();
  }

  /** Where a balancer service listens, if it does. */
  address(lbId: number, listenPort: number): { hostname: string; port: number } | undefined {
    return this.#paths.has(`${lbId}:${listenPort}`)
      ? { hostname: balancerAddress(lbId), port: listenPort }
      : undefined;
  }

  /** Connections refused for want of a healthy target, over all services. */
  get refused(): number {
    return [...this.#paths.values()].reduce((n, p) => n + p.refused, 0);
  }

  /** Connections a target's firewall dropped, over all services. */
  get dropped(): number {
    return [...this.#paths.values()].reduce((n, p) => n + p.dropped, 0);
  }

  /**
   * A client at `source` (an address outside) connecting to `port` of server `serverId`'s public
   * address: refused as dropped when the server's firewalls do not let it in, else connected to
   * where the server's endpoints listen.
   */
  async connectFrom(source: string, serverId: number, port: number): Promise<Deno.TcpConn> {
    if (!allowsInbound(this.world, serverId, { protocol: "tcp", source, port })) {
      throw new Deno.errors.TimedOut(
        `${source} → server ${serverId}:${port}: dropped by the server's firewall`,
      );
    }
    return await Deno.connect({ hostname: this.opts.serverAddress(serverId), port });
  }

  /** Brings listeners and targets in line with the balancers now. */
  reconcile(): void {
    const wanted = new Set<string>();
    for (const lb of this.world.loadBalancers.values()) {
      const targets = targetServerIds(this.world, lb);
      for (const svc of lb.services) {
        const key = `${lb.id}:${svc.listen_port}`;
        wanted.add(key);
        let path = this.#paths.get(key);
        if (!path) {
          try {
            path = new ServicePath(this.world, lb.id, svc.listen_port, this.opts);
          } catch {
            continue; // the port cannot be bound here; tried again next time
          }
          this.#paths.set(key, path);
        }
        path.reconcile(targets);
      }
    }
    for (const [key, path] of this.#paths) {
      if (wanted.has(key)) continue;
      path.close();
      this.#paths.delete(key);
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    for (const path of this.#paths.values()) path.close();
    this.#paths.clear();
  }
}
