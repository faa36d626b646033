/** A transport fenced by a leadership term: a request still on its way when the term ends never lands. */
import { assertEquals, assertRejects } from "../testing/assert.ts";
import { MemoryApiserver } from "../testing/memory_apiserver.ts";
import { KubeClient } from "./client.ts";
import { fencedTransport } from "./fenced.ts";
import { NODES } from "./resources.ts";
import type { KubeRequest } from "./transport.ts";

Deno.test("fenced transport: a write hung when the term ends is cancelled, and nothing is sent after it", async () => {
  const api = new MemoryApiserver();
  api.seed("nodes", { metadata: { name: "n1" } });
  let release = () => {};
  const network = new Promise<void>((resolve) => release = resolve);
  // A broken network: requests wait, then arrive unless cancelled meanwhile.
  const hung = {
    send: async (request: KubeRequest) => {
      await Promise.race([
        network,
        new Promise((_, reject) =>
          request.signal?.addEventListener("abort", () => reject(request.signal!.reason))
        ),
      ]);
      return await api.send(request);
    },
    close: () => {},
  };
  const term = new AbortController();
  const client = new KubeClient(fencedTransport(hung, term.signal));
  const patch = client.patch(NODES, "n1", "merge", { metadata: { labels: { stale: "yes" } } });
  term.abort(new Error("leadership lost"));
  release();
  assertEquals((await assertRejects(() => patch, Error)).message, "leadership lost");
  assertEquals((await assertRejects(() => client.get(NODES, "n1"), Error)).message, "leadership lost");
  const node = await new KubeClient(api).get(NODES, "n1");
  assertEquals(node.metadata?.labels?.stale, undefined, "the late write never landed");
});
