/**
 * Helpers of the benchmark: registering many kubelet-like Nodes, waiting, quantiles.
 *
 * @module
 */
import type { KubeClient } from "../kube/client.ts";
import { registerNode, setReady } from "../tests/ccm_harness.ts";

/** Registers `count` Ready Nodes `node-<offset..>` like kubelets, 50 at a time. */
export async function createNodes(client: KubeClient, count: number, offset: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `node-${offset + i}`);
  // Healthy kubelets: registered, then Ready (the lifecycle controller leaves Ready nodes alone).
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map(async (n) => {
        await registerNode(client, n);
        await setReady(client, n, true);
      }),
    );
  }
}

/** Polls `check` every `intervalMs` until it is true; throws after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`benchmark step did not converge within ${timeoutMs / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The `q` quantile of sorted values. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}
