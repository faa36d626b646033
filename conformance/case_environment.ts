/**
 * One case's world, set up as the golden README describes: a fresh kube-apiserver and simulator,
 * the seed, Nodes registered like kubelets, Services, the CCM under test as a child process, and the
 * steps. It also remembers every ID it has seen (servers, Services, certificates), so the state can
 * be normalized even after an object is gone.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import { KubeClient } from "../kube/client.ts";
import { HttpTransport } from "../kube/transport.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { DEFAULT_SIM_TOKEN, Simulator } from "../hcloud_sim/simulator.ts";
import { LOAD_BALANCER_TYPES, LOCATIONS } from "../hcloud_sim/catalog.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { freePort, pollUntil } from "../testing/helpers.ts";
import { type CcmProcess, spawnCcm } from "../testing/ccm_process.ts";
import type { Case, NodeSpec, ServerSeed, ServiceSpec, Step } from "./case_file.ts";
import { substitute } from "./case_file.ts";

import { UNINITIALIZED_TAINT } from "../kube/well_known.ts";
/** A real certificate for example.com (the golden recordings' uploaded certificates name it). */
const FIXTURES = new URL("../tests/fixtures/", import.meta.url);
const EXAMPLE_PEM = Deno.readTextFileSync(new URL("example_com_cert.pem", FIXTURES));
const EXAMPLE_KEY = Deno.readTextFileSync(new URL("example_com_key.pem", FIXTURES));

/** IDs seen during a case, for normalization. */
export interface Seen {
  servers: Map<number, string>;
  serviceUids: Map<string, string>;
  certificates: Map<number, string>;
}

/** A running case environment. */
export class CaseEnvironment {
  readonly seen: Seen = { servers: new Map(), serviceUids: new Map(), certificates: new Map() };
  ccm?: CcmProcess;
  ccmStartedAt = 0;
  #httpServer?: Deno.HttpServer<Deno.NetAddr>;

  private constructor(
    readonly testCase: Case,
    readonly cluster: TestCluster,
    readonly sim: Simulator,
    readonly client: KubeClient,
  ) {}

  /** Starts a fresh apiserver and simulator (action duration 200 ms, no latency). */
  static async start(testCase: Case): Promise<CaseEnvironment> {
    const cluster = await TestCluster.start();
    try {
      const sim = new Simulator({ quiet: true, actionDurationMs: 200 }).start();
      const client = new KubeClient(
        new HttpTransport(await cluster.adminConnection(), { qps: 0 }),
        "conformance",
      );
      const env = new CaseEnvironment(testCase, cluster, sim, client);
      env.#httpServer = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        (req) => env.#handle(req),
      );
      return env;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** The simulator's `/v1` URL. */
  get endpoint(): string {
    const addr = this.#httpServer!.addr;
    return `http://${addr.hostname}:${addr.port}/v1`;
  }

  /**
   * The simulator takes `load_balancer_type` and `location` only as names when creating or
   * retyping a load balancer; hcloud-go sends IDs. As the README asks, IDs become names first.
   */
  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const retype = req.method === "POST" &&
      (/^\/v1\/load_balancers$/.test(url.pathname) ||
        /^\/v1\/load_balancers\/\d+\/actions\/change_type$/.test(url.pathname));
    if (!retype) return await this.sim.handle(req);
    const text = await req.text();
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text);
    } catch {
      return await this.sim.handle(
        new Request(req.url, { method: req.method, headers: req.headers, body: text }),
      );
    }
    if (typeof body.load_balancer_type === "number") {
      body.load_balancer_type = LOAD_BALANCER_TYPES.find((t) => t.id === body.load_balancer_type)?.name ??
        body.load_balancer_type;
    }
    if (typeof body.location === "number") {
      body.location = LOCATIONS.find((l) => l.id === body.location)?.name ?? body.location;
    }
    return await this.sim.handle(
      new Request(req.url, { method: req.method, headers: req.headers, body: JSON.stringify(body) }),
    );
  }

  /**
   * Calls the simulator (public API with the token, or the control API under `/_sim`). A call that
   * meets `423 locked` (an action still running on the resource, e.g. `change_protection` right after
   * the create) waits for that resource's running actions and is sent again, as a careful client
   * would: only the CCM under test is judged, never the harness's own set-up.
   */
  async call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const base = this.endpoint.replace(/\/v1$/, "");
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await this.sim.handle(
        new Request(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${DEFAULT_SIM_TOKEN}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      const text = await res.text();
      const resource = path.match(/^\/v1\/([a-z_]+)\/(\d+)(\/|$)/);
      if (res.status === 423 && resource && Date.now() < deadline) {
        await this.#waitUntilUnlocked(resource[1], resource[2], deadline);
        continue;
      }
      if (!res.ok) throw new Error(`simulator ${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : {};
    }
  }

  /** Waits until no action runs on `/v1/{collection}/{id}` (or the deadline passes). */
  async #waitUntilUnlocked(collection: string, id: string, deadline: number): Promise<void> {
    const idle = async () => {
      const out = await this.call("GET", `/v1/${collection}/${id}/actions?status=running`);
      return ((out.actions ?? []) as unknown[]).length === 0;
    };
    await pollUntil(idle, { timeoutMs: Math.max(0, deadline - Date.now()) });
  }

  /** Seeds networks, servers and certificates (load balancers come separately). */
  async seedWorld(): Promise<void> {
    const seed = this.testCase.seed;
    await this.call("POST", "/_sim/seed", {
      networks: seed.networks ?? [],
      servers: seed.servers ?? [],
      robot_servers: seed.robot_servers ?? [],
    });
    this.rememberServers();
    for (const cert of seed.certificates ?? []) {
      const managed = cert.type === "managed";
      const out = await this.call("POST", "/v1/certificates", {
        name: cert.name,
        type: managed ? "managed" : "uploaded",
        labels: cert.labels ?? {},
        ...(managed
          ? { domain_names: cert.domain_names ?? ["example.com"] }
          : { certificate: EXAMPLE_PEM, private_key: EXAMPLE_KEY }),
      });
      const c = out.certificate as { id: number; name: string };
      this.seen.certificates.set(c.id, c.name);
    }
  }

  /** Seeds the load balancers through the public API (after the Services, if those come first). */
  async seedLoadBalancers(): Promise<void> {
    const actions: number[] = [];
    const note = (out: Record<string, unknown>) => {
      const a = out.action as { id: number } | undefined;
      if (a) actions.push(a.id);
    };
    for (const raw of this.testCase.seed.load_balancers ?? []) {
      const lb = this.#substitute(raw);
      const serverId = (name: string) => {
        const id = [...this.seen.servers].find(([, n]) => n === name)?.[0];
        if (id === undefined) throw new Error(`load balancer ${lb.name}: no server ${name}`);
        return id;
      };
      const out = await this.call("POST", "/v1/load_balancers", {
        name: lb.name,
        load_balancer_type: lb.load_balancer_type,
        ...(lb.location ? { location: lb.location } : {}),
        ...(lb.network_zone ? { network_zone: lb.network_zone } : {}),
        labels: lb.labels ?? {},
        services: lb.services ?? [],
        targets: (lb.targets ?? []).map((t) => ({
          type: "server",
          server: { id: serverId(t.server) },
          use_private_ip: t.use_private_ip ?? false,
        })),
      });
      note(out);
      const created = out.load_balancer as { id: number };
      if (lb.protection_delete) {
        note(
          await this.call("POST", `/v1/load_balancers/${created.id}/actions/change_protection`, {
            delete: true,
          }),
        );
      }
    }
    await this.#waitForActions(actions);
  }

  /** Waits until the seeding actions have finished, so the CCM finds nothing locked. */
  async #waitForActions(ids: number[]): Promise<void> {
    if (!ids.length) return;
    const query = ids.map((id) => `id=${id}`).join("&");
    const done = async () =>
      ((await this.call("GET", `/v1/actions?${query}`)).actions as { status: string }[])
        .every((a) => a.status !== "running");
    await pollUntil(done, { timeoutMs: 10_000 });
  }

  /** Registers every Node of the case, in order. */
  async registerNodes(): Promise<void> {
    for (const [index, node] of this.testCase.nodes.entries()) await this.registerNode(node, index);
  }

  /** Registers a Node as a kubelet with `--cloud-provider=external` does. */
  async registerNode(node: NodeSpec, index: number): Promise<void> {
    const podCIDR = node.podCIDR ?? `10.244.${index}.0/24`;
    await this.client.create<Node>(NODES, {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: node.name,
        labels: { "kubernetes.io/hostname": node.name, ...node.labels },
        ...(node.annotations ? { annotations: node.annotations } : {}),
      },
      spec: {
        podCIDR,
        podCIDRs: [podCIDR],
        ...(node.providerID ? { providerID: node.providerID } : {}),
        taints: [{ key: UNINITIALIZED_TAINT, value: "true", effect: "NoSchedule" }],
      },
    });
    const now = new Date().toISOString();
    await this.client.patch(NODES, node.name, "strategic", {
      status: {
        addresses: [{ type: "Hostname", address: node.name }],
        conditions: [{
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        }],
      },
    }, { subresource: "status" });
  }

  /** Creates the case's Services. */
  async createServices(): Promise<void> {
    for (const svc of this.testCase.services ?? []) await this.createService(svc);
  }

  /** Creates one Service as the README describes (type LoadBalancer, selector `app: <name>`). */
  async createService(raw: ServiceSpec): Promise<void> {
    const svc = this.#substitute(raw);
    const namespace = svc.namespace ?? "default";
    const created = await this.client.create<Service>(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: svc.name, namespace, annotations: svc.annotations ?? {} },
      spec: {
        type: svc.type ?? "LoadBalancer",
        selector: { app: svc.name },
        ports: servicePorts(svc.ports),
        ...(svc.externalTrafficPolicy ? { externalTrafficPolicy: svc.externalTrafficPolicy } : {}),
        ...svc.spec,
      },
    }, { namespace });
    this.seen.serviceUids.set(created.metadata!.uid!, svc.name);
  }

  /** Starts the CCM under test and waits until it reports ready (or exits). */
  async startCcm(): Promise<void> {
    const metricsPort = freePort();
    this.ccmStartedAt = Date.now();
    this.ccm = spawnCcm([
      `--kubeconfig=${this.cluster.kubeconfigPath}`,
      "--leader-elect=false",
      ...this.testCase.flags ?? [],
    ], {
      HCLOUD_TOKEN: DEFAULT_SIM_TOKEN,
      HCLOUD_ENDPOINT: this.endpoint,
      HETZNER_ENDPOINT: this.endpoint,
      ROBOT_ENDPOINT: this.endpoint.replace(/\/v1$/, "/robot"),
      ROBOT_USER: "robot-user",
      ROBOT_PASSWORD: "robot-password",
      HCLOUD_NETWORK_DISABLE_ATTACHED_CHECK: "true",
      HCLOUD_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      ...this.testCase.env,
    });
    let exited = false;
    this.ccm.status.then(() => exited = true);
    const ccm = this.ccm;
    const ready = async () => (await ccm.get("/readyz")).status === 200;
    await pollUntil(ready, { timeoutMs: 60_000, intervalMs: 100, ignoreErrors: true, stop: () => exited });
  }

  /** Applies one step. */
  async applyStep(step: Step): Promise<void> {
    const serviceName = typeof step.service === "string" ? step.service : step.service?.name;
    const nodeOf = (fallback: string) =>
      typeof step.node === "string" ? step.node : step.node?.name ?? fallback;
    switch (step.action) {
      case "annotate_service":
        await this.#patchService(serviceName!, {
          metadata: { annotations: this.#substitute(step.annotations) },
        });
        return;
      case "patch_service":
        await this.#patchService(serviceName!, this.#substitute(step.patch!));
        return;
      case "set_ports": {
        const current = await this.client.get<Service>(SERVICES, serviceName!, { namespace: "default" });
        const ports = servicePorts(step.ports!).map((p) => {
          const old = current.spec?.ports?.find((o) =>
            o.port === p.port && (o.protocol ?? "TCP") === p.protocol
          );
          return old?.nodePort ? { ...p, nodePort: old.nodePort } : p;
        });
        await this.client.update<Service>(SERVICES, { ...current, spec: { ...current.spec, ports } });
        return;
      }
      case "create_service":
        await this.createService(step.service as ServiceSpec);
        return;
      case "delete_service":
        await this.client.delete(SERVICES, serviceName!, { namespace: "default" });
        return;
      case "power_off_server": {
        const server = step.server as string;
        await this.call("POST", `/_sim/servers/${this.#serverId(server)}/power_off`);
        await this.#nodeUnknown(nodeOf(server));
        return;
      }
      case "delete_server": {
        const server = step.server as string;
        await this.call("DELETE", `/_sim/servers/${this.#serverId(server)}`);
        await this.#nodeUnknown(nodeOf(server));
        return;
      }
      case "add_node": {
        const seed = step.server as ServerSeed;
        await this.call("POST", "/_sim/servers", seed);
        this.rememberServers();
        const node: NodeSpec = typeof step.node === "string"
          ? { name: step.node }
          : step.node ?? { name: seed.name };
        await this.registerNode(node, step.index ?? this.testCase.nodes.length);
        return;
      }
      case "label_node":
        await this.client.patch(NODES, nodeOf(""), "merge", { metadata: { labels: step.labels } });
        return;
      case "delete_robot_server": {
        const name = step.server as string;
        const server = [...this.sim.robot.servers.values()].find((s) => s.server_name === name);
        if (!server) throw new Error(`no Robot server named ${name}`);
        await this.call("DELETE", `/_sim/robot/servers/${server.server_number}`);
        await this.#nodeUnknown(nodeOf(name));
        return;
      }
      case "node_not_ready":
        await this.#nodeUnknown(nodeOf(""));
        return;
      default:
        throw new Error(`unknown step action "${step.action}"`);
    }
  }

  /** Records the names of the simulator's servers by ID. */
  rememberServers(): void {
    for (const s of this.sim.world.servers.values()) this.seen.servers.set(s.id, s.name);
  }

  /** Stops the CCM (SIGTERM, then SIGKILL), the simulator and the cluster. */
  async stop(): Promise<void> {
    if (this.ccm) {
      try {
        this.ccm.child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          this.ccm!.child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 6_000);
      await this.ccm.status;
      clearTimeout(timer);
    }
    await this.#httpServer?.shutdown();
    await this.sim.stop();
    await this.cluster.stop();
  }

  #serverId(name: string): number {
    const id = [...this.sim.world.servers.values()].find((s) => s.name === name)?.id;
    if (id === undefined) throw new Error(`no server ${name}`);
    return id;
  }

  async #patchService(name: string, patch: unknown): Promise<void> {
    await this.client.patch(SERVICES, name, "merge", patch, { namespace: "default" });
  }

  /** The Node's kubelet stops reporting: `Ready=Unknown` (`NodeStatusUnknown`). */
  async #nodeUnknown(name: string): Promise<void> {
    const now = new Date().toISOString();
    await this.client.patch(NODES, name, "strategic", {
      status: {
        conditions: [{
          type: "Ready",
          status: "Unknown",
          reason: "NodeStatusUnknown",
          message: "Kubelet stopped posting node status.",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        }],
      },
    }, { subresource: "status" });
  }

  #substitute<T>(value: T): T {
    const certs = new Map([...this.seen.certificates].map(([id, name]) => [name, id]));
    const uids = new Map([...this.seen.serviceUids].map(([uid, name]) => [name, uid]));
    return substitute(value, certs, uids);
  }
}

/** Ports as the README builds them: `targetPort` = `port`, protocol TCP unless given. */
function servicePorts(ports: ServiceSpec["ports"]) {
  return ports.map((p) => ({
    ...(p.name ? { name: p.name } : {}),
    port: p.port,
    targetPort: p.port,
    protocol: p.protocol ?? "TCP",
  }));
}
