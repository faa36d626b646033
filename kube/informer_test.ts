import { assert, assertEquals } from "../testing/assert.ts";
import { MemoryApiserver } from "../testing/memory_apiserver.ts";
import { eventually } from "../testing/helpers.ts";
import { setupLogging } from "../lib/log.ts";
import { KubeClient } from "./client.ts";
import { Informer } from "./informer.ts";
import { NODES } from "./resources.ts";

Deno.test("informer: a watch silent past the watchdog is renewed quietly, from where it was, and keeps working", async () => {
  const lines: string[] = [];
  setupLogging({ level: "info", format: "text", write: (line) => lines.push(line) });
  const apiserver = new MemoryApiserver();
  apiserver.seed("nodes", { metadata: { name: "a" } });
  const informer = new Informer(new KubeClient(apiserver), NODES, { watchdogMs: 100 });
  const health: unknown[] = [];
  informer.onHealth((error) => health.push(error));
  const stop = new AbortController();
  const run = informer.run(stop.signal);
  try {
    await eventually(() => Promise.resolve(informer.watchRenewals >= 3), 5_000);
    const watches = apiserver.requests.filter((r) => r.startsWith("watch")).length;
    assert(watches >= 3, `${watches} watches`);
    assertEquals(informer.listCount, 1, "renewed from the resourceVersion, never relisted");
    apiserver.seed("nodes", { metadata: { name: "b" } });
    await eventually(() => Promise.resolve(informer.list().length === 2), 5_000);
  } finally {
    stop.abort();
    await run;
    apiserver.close();
  }
  assertEquals(health, [], "a quiet watch is not a failure");
  assertEquals(lines.filter((l) => /WARN|ERROR/.test(l)), [], "nor a warning");
  setupLogging({ level: "error", format: "text" });
});

Deno.test("informer: a watch broken while changes happen is resumed from its version, and after a compaction relisted: nothing missed", async () => {
  const apiserver = new MemoryApiserver();
  apiserver.seed("nodes", { metadata: { name: "a" } });
  const informer = new Informer(new KubeClient(apiserver), NODES, { watchdogMs: 60_000 });
  const stop = new AbortController();
  const run = informer.run(stop.signal);
  const names = () => informer.list().map((n) => n.metadata!.name).sort();
  try {
    await eventually(() => Promise.resolve(informer.hasSynced()), 5_000);
    // The stream breaks; changes land before the informer watches again: replayed from its version.
    apiserver.close();
    apiserver.seed("nodes", { metadata: { name: "b" } });
    await eventually(() => Promise.resolve(names().join() === "a,b"), 5_000);
    assertEquals(informer.listCount, 1, "resumed, not relisted");
    // Again, and etcd compacts meanwhile: the resume is 410 Gone, the informer lists again.
    apiserver.close();
    await apiserver.send({ method: "DELETE", path: "/api/v1/nodes/a" });
    apiserver.seed("nodes", { metadata: { name: "c" } });
    apiserver.compact();
    await eventually(() => Promise.resolve(names().join() === "b,c"), 5_000);
    assertEquals(informer.listCount, 2, "relisted after 410");
  } finally {
    stop.abort();
    await run;
    apiserver.close();
  }
});
