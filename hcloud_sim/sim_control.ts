/**
 * The simulator's control surface: what happens to a project outside any API client, as typed
 * methods. Tests, benchmarks and the `/_sim/` HTTP API (control.ts) all go through it, so nothing
 * outside the simulator mutates its world directly and each effect is modelled once (a console
 * deletion records its action; a vanished server records none).
 *
 * @module
 */
import type { Faults } from "./faults.ts";
import type { LoadBalancer, Server, ServerSeed, World } from "./world.ts";
import type { RobotSim } from "./robot.ts";
import { faults as apiFaults } from "./http_kit.ts";

/** See the module doc. */
export class SimControl {
  readonly #world: World;
  readonly #faults: () => Faults;
  readonly #setFaults: (f: Faults) => void;
  readonly #robot: RobotSim;

  constructor(world: World, robot: RobotSim, faults: { get(): Faults; set(f: Faults): void }) {
    this.#world = world;
    this.#robot = robot;
    this.#faults = faults.get;
    this.#setFaults = faults.set;
  }

  /** A server created in the console: recorded as `create_server`, as any creation is. */
  createServer(seed: ServerSeed): Server {
    const server = this.#world.addServer(seed);
    this.#world.startAction("create_server", [{ id: server.id, type: "server" }], 0);
    return server;
  }

  /** A server deleted in the console: off its networks and targets, with a `delete_server` action. */
  deleteServer(id: number): void {
    this.#world.removeServer(this.#server(id));
  }

  /**
   * A server gone without a trace in the action log (as a token for another project, an API incident
   * or a restored project would show it). Returns it, for `restoreServer`.
   */
  vanishServer(id: number): Server {
    const server = this.#server(id);
    this.#world.servers.delete(id);
    return server;
  }

  /** A server deleted as the API does (targets, networks, Primary IPs) but with no action recorded. */
  deleteServerWithoutAction(id: number): void {
    this.#world.removeServer(this.#server(id), false);
  }

  /** Every server vanishes at once (the cloud looks empty); the function returned brings them back. */
  vanishAllServers(): () => void {
    const all = [...this.#world.servers];
    this.#world.servers.clear();
    return () => {
      for (const [id, server] of all) this.#world.servers.set(id, server);
    };
  }

  /** Brings back a server that vanished, as it was. */
  restoreServer(server: Server): void {
    this.#world.servers.set(server.id, server);
  }

  /** Powered off (or on) from inside the OS: no action is recorded, as with the real API. */
  setPower(id: number, on: boolean): void {
    this.#server(id).status = on ? "running" : "off";
  }

  /** Renamed in the console: no action is recorded (renames are not actions). */
  renameServer(id: number, name: string): void {
    this.#server(id).name = name;
  }

  /** Labels edited in the console or by a tool: no action is recorded (label changes are not actions). */
  setLabels(kind: "server" | "load_balancer", id: number, labels: Record<string, string>): void {
    const target = kind === "server" ? this.#server(id) : this.#loadBalancer(id);
    target.labels = { ...labels };
  }

  /** Delete protection switched in the console (a `change_protection` action). */
  protectLoadBalancer(id: number, protect: boolean): void {
    this.#loadBalancer(id).protection.delete = protect;
    this.#world.startAction("change_protection", [{ id, type: "load_balancer" }], 0);
  }

  /** What the balancer's health check says of a server target (healthy unless set). */
  setTargetHealth(lbId: number, serverId: number, status: "healthy" | "unhealthy" | "unknown"): void {
    this.#loadBalancer(lbId);
    this.#world.targetHealth.set(`${lbId}:${serverId}`, status);
  }

  /** Makes a load balancer look created `ms` ago (an orphan old enough to sweep, say). */
  backdateLoadBalancer(id: number, ms: number): void {
    this.#loadBalancer(id).created = new Date(Date.now() - ms).toISOString();
  }

  /** A dedicated server cancelled at Robot: gone from its server list. */
  cancelRobotServer(serverNumber: number): void {
    if (!this.#robot.servers.delete(serverNumber)) throw apiFaults.notFound("robot server");
  }

  /** A dedicated server powered off or on (Robot's reset API shows it). */
  setRobotPower(serverNumber: number, on: boolean): void {
    if (!this.#robot.servers.has(serverNumber)) throw apiFaults.notFound("robot server");
    this.#robot.power.set(serverNumber, on ? "on" : "off");
  }

  /** Robot's whole webservice answers `status` to every request; undefined ends the outage. */
  setRobotOutage(status: number | undefined): void {
    this.#robot.outage = status;
  }

  /** Moves a server to another IP in a network as the console does (detach and attach actions). */
  moveServerIp(id: number, network: string | number, ip?: string): string {
    const net = this.#world.findNetwork(network);
    if (!net) throw apiFaults.notFound("network");
    return this.#world.moveServerIp(this.#server(id), net, ip);
  }

  /** A load balancer gone without an action a client could follow (deleted in another tool, say). */
  vanishLoadBalancer(id: number): LoadBalancer {
    const lb = this.#loadBalancer(id);
    this.#world.loadBalancers.delete(id);
    return lb;
  }

  /** Changes the fault knobs named; the others stay as they are. */
  setFaults(change: Partial<Faults>): void {
    this.#setFaults({ ...this.#faults(), ...change });
  }

  /** No injected errors, latency or 429s any more. */
  clearFaults(): void {
    this.#setFaults({ rules: [], latencyMs: 0, latencySpike: undefined, rateLimitBurst: 0 });
  }

  /** The next `n` actions fail (`action_failed`). */
  failNextActions(n: number): void {
    this.#world.actionFailure.next = n;
  }

  /** How long actions run before they finish, from now on. */
  setActionDuration(ms: number): void {
    this.#world.actionDurationMs = ms;
  }

  /** This share of actions fails from now on. */
  setActionFailureRate(rate: number): void {
    this.#world.actionFailure.rate = rate;
  }

  #loadBalancer(id: number): LoadBalancer {
    const lb = this.#world.loadBalancers.get(id);
    if (!lb) throw apiFaults.notFound("load_balancer");
    return lb;
  }

  #server(id: number): Server {
    const server = this.#world.servers.get(id);
    if (!server) throw apiFaults.notFound("server");
    return server;
  }
}
