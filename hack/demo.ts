/**
 * `deno task demo`: a local kube-apiserver + etcd, the Hetzner API simulator with a network and
 * three servers, three Nodes registered like kubelets with `--cloud-provider=external` (taint, pod
 * CIDRs), the CCM (hcloud provider → simulator) and a LoadBalancer Service, shown as a live table
 * until everything converges; then it keeps running until Ctrl-C.
 *
 *   deno task demo          # live until Ctrl-C
 *   deno task demo --once   # exit 0 once converged, 1 if not within 2 minutes
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { adminClient, registerNode, startCcm } from "../testing/ccm_harness.ts";
import { Simulator } from "../hcloud_sim/simulator.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { DEMO_SEED } from "../hcloud_sim/main.ts";
import { targetServerIds } from "../hcloud_sim/lb_model.ts";
import { NODES, SERVICES } from "../kube/resources.ts";
import { setupLogging } from "../lib/log.ts";
import { INSTANCE_TYPE_LABELS, REGION_LABELS, UNINITIALIZED_TAINT, ZONE_LABELS } from "../kube/well_known.ts";
import { installAdmissionPolicy, localHints } from "./local_cluster_extras.ts";

const once = Deno.args.includes("--once");
const DEADLINE_MS = 120_000;
setupLogging({ level: (Deno.env.get("DEMO_LOG_LEVEL") ?? "warning") as "warning", format: "text" });

const stop = new AbortController();
for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => stop.abort());

console.log("starting etcd, kube-apiserver and the Hetzner API simulator ...");
const cluster = await TestCluster.start();
const sim = new Simulator({ actionDurationMs: 1_000, latencyMs: 20, quiet: true }).start();
applySeed(sim, DEMO_SEED);
const client = await adminClient(cluster);
let exitCode = 0;
const ccm = await startCcm(
  cluster,
  sim,
  ["--cluster-cidr=10.244.0.0/16", "--route-reconciliation-period=5s"],
  {
    HCLOUD_NETWORK: "k8s",
    HCLOUD_LOAD_BALANCERS_LOCATION: "fsn1",
  },
);
try {
  // The chart's admission policy, as `kubectl apply -k deploy` installs it: try a bad annotation.
  await installAdmissionPolicy(cluster);
  for (const [i, name] of ["control-plane", "worker-1", "worker-2"].entries()) {
    await registerNode(client, name, { podCIDRs: [`10.244.${i}.0/24`] });
  }
  await client.create(SERVICES, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "demo-web", namespace: "default" },
    spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ name: "http", port: 80 }] },
  });
  const started = Date.now();
  let converged = false;
  while (!stop.signal.aborted) {
    const nodes = (await client.list(NODES)).items;
    const services = (await client.list(SERVICES, { namespace: "default" })).items.filter((s) =>
      s.spec?.type === "LoadBalancer"
    );
    const routes = sim.world.findNetwork("k8s")!.routes;
    const lbs = [...sim.world.loadBalancers.values()];
    const done = nodes.length === 3 && nodes.every(initialized) && routes.length === 3 &&
      services.every((s) => (s.status?.loadBalancer?.ingress ?? []).length > 0) && lbs.length === 1 &&
      targetServerIds(sim.world, lbs[0]).length === 3;
    render(
      nodes,
      services,
      routes,
      lbs.length ? targetServerIds(sim.world, lbs[0]).length : 0,
      Math.round((Date.now() - started) / 1000),
      done,
    );
    if (done && !converged) {
      converged = true;
      console.log(
        `\nconverged after ${((Date.now() - started) / 1000).toFixed(1)} s${
          once ? "" : "; press Ctrl-C to stop"
        }`,
      );
      if (once) break;
    }
    if (!converged && Date.now() - started > DEADLINE_MS) {
      console.log("\nnot converged within 2 minutes");
      exitCode = 1;
      if (once) break;
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
} finally {
  await ccm.stop();
  client.transport.close();
  await sim.stop();
  await cluster.stop();
}
Deno.exit(exitCode);

function initialized(n: Node): boolean {
  return !!n.spec?.providerID &&
    !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT) &&
    (n.status?.conditions ?? []).some((c) => c.type === "NetworkUnavailable" && c.status === "False");
}

function render(
  nodes: Node[],
  services: {
    metadata?: { name?: string };
    status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
  }[],
  routes: { destination: string; gateway: string }[],
  targets: number,
  seconds: number,
  done: boolean,
): void {
  const rows = nodes.map((n) => {
    const l = n.metadata?.labels ?? {};
    const cond = (n.status?.conditions ?? []).find((c) => c.type === "NetworkUnavailable");
    return [
      n.metadata?.name ?? "",
      n.spec?.providerID ?? "-",
      l[INSTANCE_TYPE_LABELS[0]] ?? "-",
      `${l[REGION_LABELS[0]] ?? "-"}/${l[ZONE_LABELS[0]] ?? "-"}`,
      (n.status?.addresses ?? []).filter((a) => a.type !== "Hostname").map((a) => a.address).join(",") || "-",
      (n.spec?.taints ?? []).map((t) => t.key.split("/").pop()).join(",") || "-",
      cond ? `${cond.status === "False" ? "routed" : "no route"}` : "-",
    ];
  });
  const table = (header: string[], body: string[][]) => {
    const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
    return [header, ...body].map((r) => r.map((c, i) => c.padEnd(widths[i])).join("  ")).join("\n");
  };
  if (!once && Deno.stdout.isTerminal()) console.log("\x1b[2J\x1b[H");
  console.log(`deno-ccm demo: ${seconds}s ${done ? "(converged)" : "(converging ...)"}\n`);
  console.log(table(["NODE", "PROVIDER ID", "TYPE", "REGION/ZONE", "ADDRESSES", "TAINTS", "NETWORK"], rows));
  console.log();
  console.log(table(
    ["SERVICE", "INGRESS", "LB TARGETS"],
    services.map((s) => [
      s.metadata?.name ?? "",
      (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname).join(",") || "<pending>",
      String(targets),
    ]),
  ));
  console.log();
  console.log(table(["ROUTE", "GATEWAY"], routes.map((r) => [r.destination, r.gateway])));
  // What to try next, under the table (it is redrawn every second).
  if (!once) console.log(["", ...localHints(cluster, sim.endpoint)].join("\n"));
}
