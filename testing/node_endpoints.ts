/**
 * What runs on a Node for a load balancer, on the Node's own loopback address: the Service's
 * NodePort (here an HTTP server answering after a set delay, standing in for kube-proxy forwarding
 * to a Pod) and kube-proxy's health server on port 10256, with kube-proxy's semantics for `/healthz`
 * since KEP-3836: 503 on a Node that is being deleted or carries `ToBeDeletedByClusterAutoscaler`.
 * An emulation: a real kube-proxy needs a network namespace per Node, nftables and Pods behind its
 * rules, which this suite does not have yet.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";

/** kube-proxy's health server port (`--healthz-bind-address`). */
export const KUBE_PROXY_HEALTHZ_PORT = 10256;

/** kube-proxy's `/healthz` status for a Node (KEP-3836): 503 when it is leaving, else 200. */
export function kubeProxyHealthz(node: Node | undefined): 200 | 503 {
  if (!node || node.metadata?.deletionTimestamp) return 503;
  return (node.spec?.taints ?? []).some((t) => t.key === "ToBeDeletedByClusterAutoscaler") ? 503 : 200;
}

/** The loopback address of server `id`'s Node-side endpoints: 127.88.x.y. */
export function nodeAddress(serverId: number): string {
  return `127.88.${(serverId >> 8) & 255}.${serverId & 255}`;
}

/** One Node's endpoints. */
export class NodeEndpoints {
  readonly #servers: Deno.HttpServer[] = [];
  #node?: Node;

  constructor(readonly address: string, readonly name: string) {
    this.#servers.push(Deno.serve({
      hostname: address,
      port: KUBE_PROXY_HEALTHZ_PORT,
      onListen: () => {},
    }, (req) => {
      if (new URL(req.url).pathname !== "/healthz") return new Response("not found", { status: 404 });
      const status = kubeProxyHealthz(this.#node);
      return new Response(status === 200 ? "ok" : "node is leaving", { status });
    }));
  }

  /** What the Node is now (kube-proxy watches it). */
  observe(node: Node | undefined): void {
    this.#node = node;
  }

  /** Serves the NodePort: an HTTP answer naming the Node after `delayMs`. */
  serveNodePort(port: number, delayMs: number): void {
    this.#servers.push(Deno.serve({ hostname: this.address, port, onListen: () => {} }, async () => {
      await new Promise((r) => setTimeout(r, delayMs));
      return new Response(`served by ${this.name}\n`);
    }));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#servers.map((s) => s.shutdown()));
  }
}
