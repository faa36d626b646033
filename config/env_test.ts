import { assertEquals } from "../testing/assert.ts";
import { ENV_VARS, readEnv } from "./env.ts";

const REPO = new URL("..", import.meta.url).pathname;

Deno.test("env: the compiled binary may read exactly the variables the configuration reads", async () => {
  const task: string = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`)).tasks.compile;
  const allowed = task.match(/--allow-env=(\S+)/)?.[1].split(",") ?? [];
  assertEquals([...allowed].sort(), [...ENV_VARS].sort());
});

Deno.test("env: every variable of ours reaches the configuration", () => {
  const previous = Deno.env.get("HCLOUD_SERVER_REFRESH");
  Deno.env.set("HCLOUD_SERVER_REFRESH", "list");
  try {
    assertEquals(readEnv().HCLOUD_SERVER_REFRESH, "list");
  } finally {
    if (previous === undefined) Deno.env.delete("HCLOUD_SERVER_REFRESH");
    else Deno.env.set("HCLOUD_SERVER_REFRESH", previous);
  }
});
