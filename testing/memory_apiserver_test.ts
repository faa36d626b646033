import { assertEquals } from "./assert.ts";
import { MemoryApiserver } from "./memory_apiserver.ts";
import { FakeClock } from "./fake_clock.ts";

const NODES = "/api/v1/nodes";

/** The first `n` events of a watch from `from`, as `TYPE name rv`. */
async function watched(api: MemoryApiserver, from: string, n: number): Promise<string[]> {
  const stop = new AbortController();
  const response = await api.send({
    method: "GET",
    path: NODES,
    query: new URLSearchParams({ watch: "true", resourceVersion: from }),
    signal: stop.signal,
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: string[] = [];
  let buffer = "";
  while (out.length < n) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      const e = JSON.parse(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
      out.push(
        e.type === "ERROR"
          ? `ERROR ${e.object.code}`
          : `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`,
      );
    }
  }
  stop.abort();
  await reader.cancel().catch(() => {});
  return out;
}

Deno.test("memory apiserver: a watch from a version replays what came after it; after a compaction it is 410 Gone", async () => {
  const api = new MemoryApiserver();
  api.seed("nodes", { metadata: { name: "a" } });
  const listed = await (await api.send({ method: "GET", path: NODES })).json();
  const from = listed.metadata.resourceVersion;
  api.seed("nodes", { metadata: { name: "b" } });
  await api.send({ method: "DELETE", path: `${NODES}/a` });
  assertEquals(await watched(api, from, 2), [`ADDED b ${Number(from) + 1}`, `DELETED a ${Number(from) + 2}`]);
  api.compact();
  assertEquals(await watched(api, from, 1), ["ERROR 410"]);
  api.close();
});

Deno.test("memory apiserver: an update naming a version that is not the object's current one is 409 Conflict", async () => {
  const api = new MemoryApiserver();
  api.seed("nodes", { metadata: { name: "a" } });
  const seen = api.object<{ metadata: { resourceVersion: string } }>("nodes", "a")!;
  const put = (rv: string) =>
    api.send({
      method: "PUT",
      path: `${NODES}/a`,
      body: JSON.stringify({ metadata: { name: "a", resourceVersion: rv, labels: { x: rv } } }),
    });
  assertEquals((await put(seen.metadata.resourceVersion)).status, 200);
  assertEquals((await put(seen.metadata.resourceVersion)).status, 409, "the same version again is stale now");
  api.close();
});

Deno.test("memory apiserver: a lagging watch never lets a later event overtake one held back, even at the moment it is due", async () => {
  const clock = new FakeClock(0, { inProcess: true });
  const api = new MemoryApiserver();
  api.now = () => clock.now();
  api.later = (fn, ms) => void clock.setTimeout(fn, ms);
  api.seed("nodes", { metadata: { name: "a" } });
  const from = (await (await api.send({ method: "GET", path: NODES })).json()).metadata.resourceVersion;
  const seen = watched(api, from, 2);
  // A timer due when the held event is, set first: it fires first and writes at that very moment.
  clock.setTimeout(() => api.seed("nodes", { metadata: { name: "late" } }), 5_000);
  api.watchDelayMs = 5_000;
  api.seed("nodes", { metadata: { name: "early" } });
  api.watchDelayMs = 0;
  await clock.advance(5_000);
  assertEquals(await seen, [`ADDED early ${Number(from) + 1}`, `ADDED late ${Number(from) + 2}`]);
  api.close();
});
