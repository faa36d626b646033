/**
 * Helpers of the benchmark: registering many kubelet-like Nodes, waiting, quantiles.
 *
 * @module
 */
import type { KubeClient } from "../kube/client.ts";
import { registerNode } from "../testing/ccm_harness.ts";
import { pollUntil } from "../testing/helpers.ts";
import { NODES, SERVICES } from "../kube/resources.ts";

/**
 * Registers `count` Ready Nodes `node-<offset..>` like kubelets, 50 at a time, with a status of a
 * real kubelet's size (conditions, capacity, node info and 40 images), so caches hold what they
 * would in production.
 */
export async function createNodes(client: KubeClient, count: number, offset: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `node-${offset + i}`);
  // As a kubelet: the Node, then one Ready status report (the lifecycle controller leaves it alone).
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map((n) => registerNode(client, n, { status: kubeletStatus() })),
    );
  }
}

/** Creates `count` LoadBalancer Services `svc-<i>` in `default`, all at once. */
export async function createServices(client: KubeClient, count: number): Promise<void> {
  await Promise.all(Array.from({ length: count }, (_, i) =>
    client.create(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: `svc-${i}`, namespace: "default" },
      spec: { type: "LoadBalancer", selector: { app: `a${i}` }, ports: [{ name: "http", port: 80 }] },
    })));
}

/** How many Services in `default` have a load-balancer ingress. */
export async function ingressCount(client: KubeClient): Promise<number> {
  return (await client.list(SERVICES, { namespace: "default" })).items.filter((s) =>
    (s.status?.loadBalancer?.ingress ?? []).length
  ).length;
}

/** The status a kubelet reports: Ready, capacity, node info and its images. */
function kubeletStatus() {
  const now = new Date().toISOString();
  const condition = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    message: `kubelet reports ${reason}`,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  const resources = { cpu: "3", "ephemeral-storage": "78425224Ki", memory: "3911960Ki", pods: "110" };
  return {
    conditions: [
      condition("MemoryPressure", "False", "KubeletHasSufficientMemory"),
      condition("DiskPressure", "False", "KubeletHasNoDiskPressure"),
      condition("PIDPressure", "False", "KubeletHasSufficientPID"),
      condition("Ready", "True", "KubeletReady"),
    ],
    capacity: resources,
    allocatable: resources,
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      architecture: "amd64",
      bootID: crypto.randomUUID(),
      containerRuntimeVersion: "containerd://2.1.4",
      kernelVersion: "6.12.48+deb13-amd64",
      kubeProxyVersion: "",
      kubeletVersion: "v1.36.3",
      machineID: crypto.randomUUID().replaceAll("-", ""),
      operatingSystem: "linux",
      osImage: "Debian GNU/Linux 13 (trixie)",
      systemUUID: crypto.randomUUID(),
    },
    images: Array.from({ length: 40 }, (_, i) => ({
      names: [
        `registry.example.com/team-${i % 7}/service-${i}@sha256:${"0123456789abcdef".repeat(4)}`,
        `registry.example.com/team-${i % 7}/service-${i}:v1.${i}.0`,
      ],
      sizeBytes: 20_000_000 + i * 1_000_003,
    })),
  };
}

/** Polls `check` every `intervalMs` until it is true; throws after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<void> {
  if (!(await pollUntil(check, { timeoutMs, intervalMs }))) {
    throw new Error(`benchmark step did not converge within ${timeoutMs / 1000} s`);
  }
}

/** The `q` quantile of sorted values. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/**
 * Reports every Node's status once per `periodMs`, spread evenly, like kubelets do (their
 * `nodeStatusReportFrequency` is 5 minutes), until `signal` aborts.
 */
export async function kubeletHeartbeats(
  client: KubeClient,
  names: string[],
  periodMs: number,
  signal: AbortSignal,
): Promise<void> {
  const gap = periodMs / names.length;
  for (let i = 0; !signal.aborted; i = (i + 1) % names.length) {
    const now = new Date().toISOString();
    await client.patch(NODES, names[i], "strategic", {
      status: {
        conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", lastHeartbeatTime: now }],
      },
    }, { subresource: "status" }).catch(() => {});
    await new Promise((r) => setTimeout(r, gap));
  }
}

/**
 * How often to list `nodes` kubelet-sized Nodes while waiting: every 250 ms for a 500-Node burst, up to
 * every 5 s at 10 000 (each list of 10 000 is ~120 MB the apiserver serves; every 250 ms, the benchmark's
 * own lists kept the apiserver, which the CCM shares, busy all the time).
 */
export function listInterval(nodes: number): number {
  return Math.min(5_000, Math.max(250, nodes / 2));
}

/**
 * Waits until every Node in `names` is initialized; returns the seconds each took, sorted. Lists every
 * Node of the cluster at {@link listInterval} of the cluster's size.
 */
export async function initTimes(
  client: KubeClient,
  names: Set<string>,
  start: number,
  timeoutMs: number,
  series: [number, number][],
) {
  const done = new Map<string, number>();
  const deadline = Date.now() + timeoutMs;
  while (done.size < names.size) {
    if (Date.now() > deadline) {
      throw new Error(`benchmark step did not converge within ${timeoutMs / 1000} s`);
    }
    const items = (await client.list(NODES)).items;
    for (const n of items) {
      const name = n.metadata!.name!;
      if (
        names.has(name) && !done.has(name) && n.spec?.providerID &&
        !(n.spec.taints ?? []).some((t) => t.key.endsWith("uninitialized"))
      ) {
        done.set(name, (Date.now() - start) / 1000);
      }
    }
    series.push([(Date.now() - start) / 1000, done.size / names.size]);
    if (done.size < names.size) await new Promise((r) => setTimeout(r, listInterval(items.length)));
  }
  return [...done.values()].sort((a, b) => a - b);
}

/**
 * `nodes` kubelet-sized Nodes join, then `services` LoadBalancer Services are created; resolves once
 * every Node is initialized and every Service has an ingress (what the profiling tools measure).
 */
export async function joinAndRollOut(client: KubeClient, nodes: number, services: number): Promise<void> {
  const started = Date.now();
  await createNodes(client, nodes, 0);
  await initTimes(
    client,
    new Set(Array.from({ length: nodes }, (_, i) => `node-${i}`)),
    started,
    1_800_000,
    [],
  );
  await createServices(client, services);
  await waitFor(async () => (await ingressCount(client)) === services, 1_800_000, listInterval(nodes));
}
