/**
 * `deno-ccm --residue=list|remove`: the way back to the official CCM. Lists what this cluster's deno-ccm
 * left in the cloud project (providers/hcloud/residue/), each piece with what the official CCM does with
 * it; `remove` then removes the pieces that only mark or duplicate, and refuses while deno-ccm still
 * runs in the cluster (it would put them back). Reads the cluster identity (the kube-system namespace's
 * UID) with the kubeconfig and the project with `HCLOUD_TOKEN`, as the CCM does.
 *
 * @module
 */
import type { ClusterConnection } from "./kube/kubeconfig.ts";
import { KubeClient } from "./kube/client.ts";
import { HttpTransport } from "./kube/transport.ts";
import { NAMESPACES } from "./kube/resources.ts";
import { OtherCcmGuard } from "./kube/other_ccm.ts";
import { findResidue, HcloudProvider, removeResidue } from "./providers/hcloud/mod.ts";
import type { CloudProvider } from "./providers/provider.ts";

/** Runs the command; resolves to the exit code (1: ours still runs, or a removal failed). */
export async function residueCommand(
  mode: "list" | "remove",
  connection: ClusterConnection,
  provider: CloudProvider,
  print: (line: string) => void = console.log,
): Promise<number> {
  if (!(provider instanceof HcloudProvider)) {
    print("--residue: only the hcloud provider leaves residue to list");
    return 1;
  }
  const transport = new HttpTransport(connection, { qps: 20, burst: 30, userAgent: "deno-ccm/residue" });
  const kube = new KubeClient(transport, "deno-ccm");
  try {
    const clusterId = (await kube.get(NAMESPACES, "kube-system")).metadata?.uid;
    if (!clusterId) throw new Error("the kube-system namespace has no UID");
    const items = await findResidue(provider.client, clusterId);
    print(`deno-ccm residue of cluster ${clusterId}: ${items.length} pieces`);
    for (const item of items) {
      print(
        `- ${item.kind} on ${item.name} (${item.id}): ${item.detail}${
          item.kept ? `; kept: ${item.kept}` : ""
        }`,
      );
    }
    if (mode === "list") return 0;
    // Ours running would put everything back: it must be scaled to 0 first.
    const stop = new AbortController();
    const ours = new OtherCcmGuard(kube, { namespace: "kube-system", images: ["deno-ccm"] });
    const watching = ours.run(stop.signal);
    try {
      await ours.waitReady(stop.signal);
      const running = ours.acting();
      if (running.length) {
        print(
          `refused: deno-ccm still runs (${
            running.map((o) => `${o.kind} ${o.namespace}/${o.name}`).join(", ")
          }); ` +
            "scale it to 0 first",
        );
        return 1;
      }
    } finally {
      stop.abort();
      await watching;
    }
    const { removed, failed } = await removeResidue(
      provider.client,
      provider.actions,
      clusterId,
      items,
      (item, error) =>
        print(
          `${error ? "failed" : "removed"}: ${item.kind} on ${item.name} (${item.id})${
            error ? `: ${error}` : ""
          }`,
        ),
    );
    print(`${removed} removed, ${failed} failed, ${items.filter((i) => i.kept).length} left to you (above)`);
    return failed ? 1 : 0;
  } finally {
    transport.close();
  }
}
