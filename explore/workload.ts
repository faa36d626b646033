/**
 * What users, kubelets and the cloud do to an explored cluster, one step at a time, drawn from the
 * world's seed: Nodes join (a server, then its Node as a kubelet registers it), go NotReady and
 * Ready, are relabelled out of balancers, lose their server or are powered off in the console, are
 * deleted by an admin; Services are created, changed (annotations drawn from the parser's own
 * choices, ports), switched away from LoadBalancer and back, deleted, and deleted and recreated
 * under the same name (a new UID); the apiserver lags or forgets its history; the CCM crashes.
 *
 * The workload keeps what it did (its own Node deletions, the Services it switched away from
 * LoadBalancer) for the invariants: the CCM is judged only on what it did itself.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { pick } from "../lib/random.ts";
import { UNINITIALIZED_TAINT } from "../controllers/mod.ts";
import type { ExploreCluster } from "./cluster.ts";
import { SERVICE_UID_LABEL } from "../providers/hcloud/mod.ts";

/** The label that keeps a Node out of balancers. */
export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
const P = "load-balancer.hetzner.cloud/";
/** Services naming one key share one balancer (ours). */
export const SHARE_ANNOTATION = "service.deno-ccm.io/load-balancer-share";
/** Annotation values a user may set, each one the parser accepts. */
const ANNOTATION_CHOICES: [string, string[]][] = [
  [`${P}algorithm-type`, ["round_robin", "least_connections"]],
  [`${P}health-check-interval`, ["5s", "15s"]],
  [`${P}uses-proxyprotocol`, ["true", "false"]],
  [`${P}use-private-ip`, ["true", "false"]],
];
/** From workload 3: a balancer selects Nodes by their pool (official CCM `node-selector`). */
const NODE_SELECTOR: [string, string[]] = [`${P}node-selector`, ["pool=a", "pool=b"]];
/** The label the node selectors read; Nodes join in pool `a` or `b` (workload 3). */
export const POOL_LABEL = "pool";
/** The cluster autoscaler's mark on a Node it is about to remove (it leaves the balancers). */
export const AUTOSCALER_TAINT = "ToBeDeletedByClusterAutoscaler";
/**
 * The workload's version: 1, the steps of the first campaigns; 2 adds every watch closed mid-stream, a
 * balancer's algorithm changed by hand and a server renamed in the console; 3 adds balancers that
 * drain leaving Nodes, node selectors, Nodes moved between pools and marked by the autoscaler; 4 runs
 * two replicas contending for the lease, the leader crashed or cut off from the apiserver for a while;
 * 5 adds a Node replaced: its server deleted, a new one made under its name, the Node registered again.
 */
export const WORKLOAD_VERSION = 5;
/** At most this many Nodes and Services at once: small worlds explore more orders per minute. */
const MAX_NODES = 5;
const MAX_SERVICES = 4;

/** What the workload did that the invariants must know. */
export interface WorkloadMemory {
  /** UIDs of the Nodes an admin deleted (the CCM did not). */
  deletedNodes: Set<string>;
  /**
   * Service UIDs whose LoadBalancer type the user ever took away (or that were deleted): a CCM that
   * saw the change late may still delete and make again their balancer, as the user asked (seeds 648
   * and 2212 of workload 1: ClusterIP and back behind a lagging view).
   */
  interrupted: Set<string>;
  /** Service UIDs the user deleted. */
  deletedServices: Set<string>;
}

/** One step: its name (for a failure's trail) and what it does. */
interface Op {
  name: string;
  weight: number;
  run: () => Promise<string | undefined>;
}

/** See the module doc. */
export class Workload {
  readonly memory: WorkloadMemory = {
    deletedNodes: new Set(),
    interrupted: new Set(),
    deletedServices: new Set(),
  };
  #nodes = 0;
  #services = 0;
  #ports = 0;

  /**
   * `version`: which steps may be drawn ({@link WORKLOAD_VERSION} by default). A seed replays its run
   * only with the steps it was found with: a kept seed names its version.
   */
  constructor(private readonly c: ExploreCluster, private readonly version = WORKLOAD_VERSION) {}

  /** One step drawn from the seed; returns what it did (undefined: nothing was possible). */
  async step(): Promise<string | undefined> {
    const ops = this.#ops();
    const total = ops.reduce((s, o) => s + o.weight, 0);
    let x = this.c.random() * total;
    for (const op of ops) {
      x -= op.weight;
      if (x < 0) return await op.run();
    }
    return undefined;
  }

  /** Adds Nodes until `n` run (the start of a schedule). */
  async joinNodes(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await this.#join();
  }

  /** Every fault and churn stops: servers back on, kubelets Ready (the liveness phase). */
  async calm(): Promise<void> {
    this.c.apiserver.watchDelayMs = 0;
    this.c.sim.faults.rules.length = 0;
    for (const node of this.#nodeList()) {
      const id = serverId(node);
      const server = id === undefined ? undefined : this.c.sim.world.servers.get(id);
      if (server && server.status !== "running") this.c.sim.control.setPower(server.id, true);
      if (!server && id !== undefined) continue; // its Node goes: the lifecycle controller's job
      await this.#ready(node.metadata!.name!, true);
    }
  }

  #ops(): Op[] {
    const nodes = this.#nodeList();
    const services = this.c.apiserver.objects<Service>("services");
    const r = (n: number) => pick(this.c.random, n);
    const anyNode = () => nodes[r(nodes.length)];
    const anyService = () => services[r(services.length)];
    const ops: Op[] = [];
    const add = (name: string, weight: number, run: () => Promise<string | undefined>) =>
      ops.push({ name, weight, run });
    if (nodes.length < MAX_NODES) add("join", 3, () => this.#join());
    if (services.length < MAX_SERVICES) {
      add("create service", 4, () => this.#create(`svc-${++this.#services}`));
    }
    add("wait", 3, () => Promise.resolve("wait"));
    if (nodes.length) {
      add("not ready", 2, async () => {
        const n = anyNode();
        await this.#ready(n.metadata!.name!, false);
        return `${n.metadata!.name} NotReady`;
      });
      add("ready", 2, async () => {
        const n = anyNode();
        // Only a kubelet on a running server reports Ready.
        const id = serverId(n);
        if (id !== undefined && this.c.sim.world.servers.get(id)?.status !== "running") return undefined;
        await this.#ready(n.metadata!.name!, true);
        return `${n.metadata!.name} Ready`;
      });
      add("relabel", 2, async () => {
        const n = anyNode();
        const excluded = n.metadata?.labels?.[EXCLUDE_LABEL] !== undefined;
        await this.c.client.patch(NODES, n.metadata!.name!, "merge", {
          metadata: { labels: { [EXCLUDE_LABEL]: excluded ? null : "" } },
        });
        return `${n.metadata!.name} ${excluded ? "back in" : "out of"} balancers`;
      });
      add("server deleted", 1, async () => {
        const n = anyNode();
        const id = serverId(n);
        if (id === undefined || !this.c.sim.world.servers.has(id)) return undefined;
        this.c.sim.control.deleteServer(id);
        await this.#ready(n.metadata!.name!, false);
        return `server of ${n.metadata!.name} deleted in the console`;
      });
      add("power off", 1, async () => {
        const n = anyNode();
        const id = serverId(n);
        if (id === undefined || !this.c.sim.world.servers.has(id)) return undefined;
        this.c.sim.control.setPower(id, false);
        await this.#ready(n.metadata!.name!, false);
        return `server of ${n.metadata!.name} powered off`;
      });
      add("node deleted", 1, async () => {
        const n = anyNode();
        this.memory.deletedNodes.add(n.metadata!.uid!);
        await this.c.client.delete(NODES, n.metadata!.name!).catch(() => {});
        return `Node ${n.metadata!.name} deleted by an admin`;
      });
    }
    if (services.length) {
      add("change service", 3, async () => {
        const s = anyService();
        // A shared balancer's settings are the first Service's: its members change only ports.
        if (s.metadata?.annotations?.[SHARE_ANNOTATION] !== undefined) return undefined;
        const choices = this.#choices();
        const [name, values] = choices[r(choices.length)];
        const value = values[r(values.length)];
        await this.c.client.patch(SERVICES, s.metadata!.name!, "merge", {
          metadata: { annotations: { [name]: value } },
        }, { namespace: "default" }).catch(() => {});
        return `${s.metadata!.name}: ${name}=${value}`;
      });
      add("port", 2, async () => {
        const s = anyService();
        const ports = s.spec?.ports ?? [];
        const shared = s.metadata?.annotations?.[SHARE_ANNOTATION] !== undefined;
        const nodePort = ports[0]?.nodePort ?? 30000;
        const next = ports.length > 1 ? ports.slice(0, 1) : [...ports, {
          name: "tls",
          port: shared ? 9000 + nodePort - 30000 : 443,
          protocol: "TCP",
          nodePort: nodePort + 1000,
        }];
        await this.c.client.patch(SERVICES, s.metadata!.name!, "merge", { spec: { ports: next } }, {
          namespace: "default",
        }).catch(() => {});
        return `${s.metadata!.name}: ${next.length} ports`;
      });
      add("type", 1, async () => {
        const s = anyService();
        const away = s.spec?.type === "LoadBalancer";
        if (away) this.memory.interrupted.add(s.metadata!.uid!);
        await this.c.client.patch(SERVICES, s.metadata!.name!, "merge", {
          spec: { type: away ? "ClusterIP" : "LoadBalancer" },
        }, { namespace: "default" }).catch(() => {});
        return `${s.metadata!.name}: type ${away ? "ClusterIP" : "LoadBalancer"}`;
      });
      add("delete service", 2, async () => {
        const s = anyService();
        this.memory.deletedServices.add(s.metadata!.uid!);
        this.memory.interrupted.add(s.metadata!.uid!);
        await this.c.client.delete(SERVICES, s.metadata!.name!, { namespace: "default" }).catch(() => {});
        return `${s.metadata!.name} deleted`;
      });
      add("recreate service", 1, async () => {
        const s = anyService();
        if (s.metadata?.deletionTimestamp) return undefined;
        this.memory.deletedServices.add(s.metadata!.uid!);
        this.memory.interrupted.add(s.metadata!.uid!);
        await this.c.client.delete(SERVICES, s.metadata!.name!, { namespace: "default" }).catch(() => {});
        // The old object waits for its finalizer: the new one comes the moment it is gone (a
        // GitOps tool re-applying it), while the CCM may still see the old one.
        for (let i = 0; i < 60 && this.c.apiserver.object("services", s.metadata!.name!, "default"); i++) {
          await this.c.clock.advance(1_000);
        }
        if (this.c.apiserver.object("services", s.metadata!.name!, "default")) {
          return `${s.metadata!.name} deleted`;
        }
        if (this.c.apiserver.watchDelayMs > 0) this.c.reached("service recreated behind a lagging view");
        return await this.#create(s.metadata!.name!);
      });
    }
    add("apiserver lags", 1, () => {
      this.c.apiserver.watchDelayMs = this.c.apiserver.watchDelayMs ? 0 : 1_000 + r(20_000);
      return Promise.resolve(`watch delay ${this.c.apiserver.watchDelayMs} ms`);
    });
    add("compaction", 1, () => {
      this.c.apiserver.compact();
      return Promise.resolve("apiserver history compacted");
    });
    add("crash", 1, () => {
      this.c.crash();
      return Promise.resolve("CCM crashed");
    });
    add("cloud faults", 2, () => {
      const [match, status, code] = [
        ["^POST /load_balancers/\\{id\\}/actions/(add|remove)_target$", 429, "rate_limit_exceeded"],
        ["^POST /load_balancers$", 503, "unavailable"],
        ["^(POST|PUT|DELETE) /", 500, "server_error"],
        ["^GET /servers$", 503, "unavailable"],
        ["^POST /networks/\\{id\\}/actions/(add|delete)_route$", 409, "conflict"],
      ][r(5)] as [string, number, string];
      this.c.sim.faults.rules.push({ match, status, code, count: 1 + r(3), rate: 0.5 });
      return Promise.resolve(`fault ${status} on ${match}`);
    });
    if (this.version < 2) return ops;
    add("watches closed", 1, () => {
      // Every watch ends mid-stream (an apiserver restarting, a load balancer in front of it): the
      // informers resume from their version, or relist once it is compacted away.
      this.c.apiserver.close();
      this.c.reached("watches closed mid-stream");
      return Promise.resolve("apiserver closed every watch");
    });
    const balancers = [...this.c.sim.world.loadBalancers.values()].filter((lb) =>
      lb.id !== this.c.foreignBalancer && lb.labels[SERVICE_UID_LABEL] !== undefined
    );
    if (balancers.length) {
      add("balancer changed by hand", 1, () => {
        // Someone flips the algorithm in the console: drift repair puts it back.
        const lb = balancers[r(balancers.length)];
        lb.algorithm.type = lb.algorithm.type === "round_robin" ? "least_connections" : "round_robin";
        return Promise.resolve(`balancer ${lb.name}: algorithm set to ${lb.algorithm.type} by hand`);
      });
    }
    if (nodes.length) {
      add("server renamed", 1, () => {
        // A rename is no action and changes nothing the CCM keys on (the provider ID).
        const id = serverId(anyNode());
        const server = id === undefined ? undefined : this.c.sim.world.servers.get(id);
        if (!server) return Promise.resolve(undefined);
        this.c.sim.control.renameServer(server.id, `${server.name}-renamed`);
        return Promise.resolve(`server ${server.id} renamed to ${server.name}`);
      });
    }
    if (this.version >= 4) {
      add("partition", 1, () => {
        // The leader loses the apiserver (its requests hang) but not the cloud: it must stop writing
        // before the standby takes the lease (renew deadline 10 s, lease 15 s).
        const ms = 5_000 + r(40_000);
        const n = this.c.partition(ms);
        if (n !== undefined) this.c.reached("leader cut off from the apiserver");
        return Promise.resolve(
          n === undefined ? undefined : `ccm-${n} cut off from the apiserver for ${ms} ms`,
        );
      });
    }
    if (this.version >= 5 && nodes.length) {
      add("node replaced", 1, async () => {
        // A machine rebuilt under its name (an operator's delete and create, an autoscaler's
        // replacement): the old server goes, the admin deletes the old Node, a new server comes under
        // the name and its kubelet registers the Node again (a new UID), while the CCM may still see
        // the old one. Nothing may delete the new Node, whose server runs.
        const n = anyNode();
        const name = n.metadata!.name!;
        const id = serverId(n);
        for (const server of [...this.c.sim.world.servers.values()]) {
          if (server.id === id || server.name === name) this.c.sim.control.deleteServer(server.id);
        }
        // The old kubelet is gone: its Node goes NotReady, and the CCM may be about to delete it.
        await this.#ready(name, false);
        await this.c.clock.advance(r(8_000));
        this.memory.deletedNodes.add(n.metadata!.uid!);
        await this.c.client.delete(NODES, name).catch(() => {});
        this.c.sim.control.createServer({ name, location: "nbg1", private_net: [{ network: "k8s" }] });
        const labels = { ...n.metadata?.labels };
        await this.c.client.create(NODES, {
          metadata: {
            name,
            labels: {
              "kubernetes.io/hostname": name,
              ...(labels[POOL_LABEL] ? { [POOL_LABEL]: labels[POOL_LABEL] } : {}),
            },
          },
          spec: {
            podCIDR: n.spec?.podCIDR,
            podCIDRs: n.spec?.podCIDRs,
            taints: [{ key: UNINITIALIZED_TAINT, value: "true", effect: "NoSchedule" }],
          },
          status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }] },
        }).catch(() => {});
        if (this.c.apiserver.watchDelayMs > 0) this.c.reached("node replaced behind a lagging view");
        return `${name} replaced: a new server and Node under its name`;
      });
    }
    if (this.version < 3 || !nodes.length) return ops;
    add("pool moved", 2, async () => {
      // A node selector's balancer keeps a Node that left its pool while it drains, then drops it.
      const n = anyNode();
      const pool = n.metadata?.labels?.[POOL_LABEL] === "a" ? "b" : "a";
      await this.c.client.patch(NODES, n.metadata!.name!, "merge", {
        metadata: { labels: { [POOL_LABEL]: pool } },
      })
        .catch(() => {});
      return `${n.metadata!.name} moved to pool ${pool}`;
    });
    add("autoscaler", 1, async () => {
      // The cluster autoscaler marks a Node it will remove (the mark carries the time), or changes its
      // mind and takes the mark away.
      const n = anyNode();
      const others = (n.spec?.taints ?? []).filter((t) => t.key !== AUTOSCALER_TAINT);
      const marked = others.length !== (n.spec?.taints ?? []).length;
      const taints = marked ? others : [...others, {
        key: AUTOSCALER_TAINT,
        value: String(Math.floor(this.c.clock.now() / 1000)),
        effect: "NoSchedule",
      }];
      await this.c.client.patch(NODES, n.metadata!.name!, "merge", { spec: { taints } }).catch(() => {});
      return `${n.metadata!.name} ${marked ? "unmarked" : "marked"} by the autoscaler`;
    });
    return ops;
  }

  /** The annotations a user may set in this version, each with values the parser accepts. */
  #choices(): [string, string[]][] {
    return this.version >= 3 ? [...ANNOTATION_CHOICES, NODE_SELECTOR] : ANNOTATION_CHOICES;
  }

  #nodeList(): Node[] {
    return this.c.apiserver.objects<Node>("nodes");
  }

  async #join(): Promise<string> {
    const k = ++this.#nodes;
    const name = `node-${k}`;
    this.c.sim.control.createServer({ name, location: "nbg1", private_net: [{ network: "k8s" }] });
    const labels: Record<string, string> = { "kubernetes.io/hostname": name };
    if (this.version >= 3) labels[POOL_LABEL] = pick(this.c.random, 2) ? "b" : "a";
    await this.c.client.create(NODES, {
      metadata: { name, labels },
      spec: {
        podCIDR: `10.244.${k}.0/24`,
        podCIDRs: [`10.244.${k}.0/24`],
        taints: [{ key: UNINITIALIZED_TAINT, value: "true", effect: "NoSchedule" }],
      },
      status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }] },
    });
    return `${name} joined`;
  }

  /** As a kubelet reports: a strategic merge of its Ready condition (other conditions stay). */
  async #ready(name: string, ready: boolean): Promise<void> {
    await this.c.client.patch(NODES, name, "strategic", {
      status: {
        conditions: [{
          type: "Ready",
          status: ready ? "True" : "Unknown",
          reason: ready ? "KubeletReady" : "NodeStatusUnknown",
        }],
      },
    }, { subresource: "status" }).catch(() => {});
  }

  /**
   * A Service of its own balancer, or (one in three) on the namespace's shared balancer: shared
   * ones listen on ports of their own (8000 + k, 9000 + k), as Services sharing one must.
   */
  async #create(name: string): Promise<string> {
    const r = (n: number) => pick(this.c.random, n);
    const annotations: Record<string, string> = {};
    const shared = r(3) === 0;
    if (shared) annotations[SHARE_ANNOTATION] = "pool-a";
    else {for (const [key, values] of this.#choices()) {
        if (r(2)) annotations[key] = values[r(values.length)];
      }}
    // Every Service, a recreated one too, gets ports of its own (shared ones must not collide).
    const k = ++this.#ports;
    const svc: Service = {
      metadata: { name, namespace: "default", annotations },
      spec: {
        type: "LoadBalancer",
        ports: [{ name: "http", port: shared ? 8000 + k : 80, protocol: "TCP", nodePort: 30000 + k }],
      },
    };
    await this.c.client.create(SERVICES, svc, { namespace: "default" }).catch(() => {});
    return `${name} created (${shared ? "shared" : `${Object.keys(annotations).length} annotations`})`;
  }
}

/** The server ID of a Node's `hcloud://` provider ID, or its name's server before it has one. */
export function serverId(node: Node): number | undefined {
  const m = node.spec?.providerID?.match(/^hcloud:\/\/(\d+)$/);
  return m ? Number(m[1]) : undefined;
}
