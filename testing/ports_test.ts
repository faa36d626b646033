import { assertEquals } from "./assert.ts";
import { reservePorts } from "./ports.ts";

const PORTS = new URL("./ports.ts", import.meta.url).href;

Deno.test("ports: a port another live test process reserved is never handed out; a dead one's is", async () => {
  const dir = await Deno.makeTempDir();
  // A quiet corner below the kernel's ephemeral range; skip ahead if something listens there.
  let bottom = 24_000;
  for (; bottom < 32_000; bottom += 10) {
    try {
      for (let p = bottom; p < bottom + 5; p++) Deno.listen({ hostname: "127.0.0.1", port: p }).close();
      break;
    } catch { /* in use: the next corner */ }
  }
  const range = { dir, bottom, top: bottom + 5 };
  // Another process takes three and keeps running (it has not bound them yet, as an apiserver that
  // is still starting).
  const other = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { reservePorts } from "${PORTS}";
       console.log(JSON.stringify(reservePorts(3, ${JSON.stringify(range)})));
       await new Promise(() => {});`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = other.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const theirs: number[] = JSON.parse((await reader.read()).value!);
  assertEquals(theirs.length, 3);

  const ours = reservePorts(2, range);
  assertEquals([...theirs, ...ours].sort(), [0, 1, 2, 3, 4].map((i) => bottom + i));

  other.kill("SIGKILL");
  await other.status;
  await reader.cancel();
  // Its reservations died with it; ours stay ours.
  assertEquals(reservePorts(3, range).sort(), [...theirs].sort());
  await Deno.remove(dir, { recursive: true });
});
