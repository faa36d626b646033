import { assert, assertEquals } from "../testing/assert.ts";
import { MemoryApiserver } from "../testing/memory_apiserver.ts";
import { eventually } from "../testing/helpers.ts";
import { setupLogging } from "../lib/log.ts";
import { KubeClient } from "./client.ts";
import { EventRecorder } from "./events.ts";
import { imageName, OtherCcmGuard } from "./other_ccm.ts";
import type { KubeRequest, KubeTransport } from "./transport.ts";
import { DAEMON_SETS, REPLICA_SETS } from "./resources.ts";

const OFFICIAL = "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.26.0";
const OURS = "ghcr.io/deno-ccm/deno-ccm:0.1.0";

/** A ReplicaSet of the Deployment `hcloud-cloud-controller-manager` as the Deployment controller writes it. */
function replicaSet(name: string, image: string, replicas: number, pods = replicas) {
  return {
    metadata: {
      name,
      namespace: "kube-system",
      uid: `uid-${name}`,
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: "hcloud-cloud-controller-manager",
        uid: "uid-deploy",
        controller: true,
      }],
    },
    spec: { replicas, template: { spec: { containers: [{ name: "ccm", image }] } } },
    status: { replicas: pods },
  };
}

/** A DaemonSet with `nodes` Nodes to run on, a pod on each. */
function daemonSet(name: string, image: string, nodes: number) {
  return {
    metadata: { name, namespace: "kube-system" },
    spec: { template: { spec: { containers: [{ image }] } } },
    status: { desiredNumberScheduled: nodes, currentNumberScheduled: nodes },
  };
}

Deno.test("other CCM: an image's repository name, whatever its registry, tag or digest", () => {
  assertEquals(imageName(OFFICIAL), "hcloud-cloud-controller-manager");
  assertEquals(imageName("hcloud-cloud-controller-manager"), "hcloud-cloud-controller-manager");
  assertEquals(
    imageName("registry.local:5000/mirror/hcloud-cloud-controller-manager@sha256:0123"),
    "hcloud-cloud-controller-manager",
  );
  assertEquals(
    imageName("quay.io/syself/hetzner-cloud-controller-manager:v1.18.0"),
    "hetzner-cloud-controller-manager",
  );
  assertEquals(imageName(OURS), "deno-ccm");
});

Deno.test("other CCM: the official CCM's ReplicaSet is found by its Deployment, said once in an event, and gone when scaled to 0", async () => {
  const lines: string[] = [];
  setupLogging({ level: "info", format: "text", write: (line) => lines.push(line) });
  const apiserver = new MemoryApiserver();
  // Ours (another image), an old ReplicaSet of the official CCM at 0, and something else.
  apiserver.seed("replicasets", replicaSet("ccm-ours", OURS, 2));
  apiserver.seed("replicasets", replicaSet("ccm-old", OFFICIAL, 0));
  apiserver.seed("daemonsets", daemonSet("cilium", "quay.io/cilium/cilium:v1.18.0", 3));
  const client = new KubeClient(apiserver);
  const recorder = new EventRecorder(client, "cloud-controller-manager");
  const guard = new OtherCcmGuard(client, {
    namespace: "kube-system",
    images: ["hcloud-cloud-controller-manager"],
    recorder,
  });
  const stop = new AbortController();
  const run = guard.run(stop.signal);
  try {
    await guard.waitClear(stop.signal);
    assertEquals(guard.acting(), []);
    assertEquals(guard.problem(), undefined);

    // An installer puts the official CCM back: its ReplicaSet asks for a pod before any exists.
    const term = guard.whileClear(stop.signal);
    apiserver.seed("replicasets", replicaSet("ccm-back", OFFICIAL, 1, 0));
    await eventually(() => Promise.resolve(term.aborted), 5_000);
    assertEquals(guard.acting(), [{
      kind: "Deployment",
      namespace: "kube-system",
      name: "hcloud-cloud-controller-manager",
      uid: "uid-deploy",
      image: OFFICIAL,
      pods: 0,
    }]);
    assert(
      guard.problem()!.includes("Deployment kube-system/hcloud-cloud-controller-manager runs " + OFFICIAL),
    );
    // Its pod comes: still one event for the Deployment.
    await client.patch(
      REPLICA_SETS,
      "ccm-back",
      "merge",
      { status: { replicas: 1 } },
      { namespace: "kube-system" },
    );
    await eventually(() => Promise.resolve(guard.acting()[0]?.pods === 1), 5_000);
    await recorder.flush();
    const events = apiserver.objects<{ reason: string; involvedObject: { kind: string; name: string } }>(
      "events",
    );
    assertEquals(events.map((e) => [e.reason, e.involvedObject.kind, e.involvedObject.name]), [
      ["OtherCloudControllerManager", "Deployment", "hcloud-cloud-controller-manager"],
    ]);
    assertEquals(lines.filter((l) => l.includes("standing by while another")).length, 1, lines.join("\n"));

    // Scaled to 0, its pod gone: clear again.
    const cleared = guard.waitClear(stop.signal);
    await client.patch(
      REPLICA_SETS,
      "ccm-back",
      "merge",
      { spec: { replicas: 0 }, status: { replicas: 0 } },
      { namespace: "kube-system" },
    );
    await cleared;
    assert(lines.some((l) => l.includes("no other cloud-controller-manager acts")));
  } finally {
    stop.abort();
    await run;
    apiserver.close();
    setupLogging({ level: "error", format: "text" });
  }
});

Deno.test("other CCM: a DaemonSet of it counts while it has Nodes to run on; without the grant the guard is blind, not blocking", async () => {
  const apiserver = new MemoryApiserver();
  apiserver.seed("daemonsets", daemonSet("hccm", OFFICIAL, 0));
  const stop = new AbortController();
  const guard = new OtherCcmGuard(new KubeClient(apiserver), {
    namespace: "kube-system",
    images: ["hcloud-cloud-controller-manager"],
  });
  const run = guard.run(stop.signal);
  try {
    await guard.waitClear(stop.signal);
    await new KubeClient(apiserver).patch(
      DAEMON_SETS,
      "hccm",
      "merge",
      { status: { desiredNumberScheduled: 3, currentNumberScheduled: 1 } },
      { namespace: "kube-system" },
    );
    await eventually(() => Promise.resolve(guard.acting().length === 1), 5_000);
    assertEquals(guard.acting()[0].kind, "DaemonSet");
    assertEquals(guard.acting()[0].pods, 1);
  } finally {
    stop.abort();
    await run;
  }

  // An older ClusterRole: replicasets and daemonsets are forbidden.
  const lines: string[] = [];
  setupLogging({ level: "info", format: "text", write: (line) => lines.push(line) });
  const forbidding: KubeTransport = {
    send: (request: KubeRequest) =>
      request.path.includes("/apis/apps/")
        ? Promise.resolve(
          Response.json({ kind: "Status", code: 403, reason: "Forbidden", message: "forbidden" }, {
            status: 403,
          }),
        )
        : apiserver.send(request),
    close: () => {},
  };
  const blind = new OtherCcmGuard(new KubeClient(forbidding), {
    namespace: "kube-system",
    images: ["hcloud-cloud-controller-manager"],
  });
  const stop2 = new AbortController();
  const run2 = blind.run(stop2.signal);
  try {
    await blind.waitClear(stop2.signal);
    assertEquals(blind.problem(), undefined);
    assert(
      lines.some((l) => l.includes("grant list and watch on apps replicasets in kube-system")),
      lines.join("\n"),
    );
  } finally {
    stop2.abort();
    await run2;
    apiserver.close();
    setupLogging({ level: "error", format: "text" });
  }
});
