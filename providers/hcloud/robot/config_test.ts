import { assert, assertEquals } from "../../../testing/assert.ts";
import { readRobotConfig } from "./config.ts";
import type { EnvVar } from "../../../config/env.ts";

const bool = (env: Record<string, string>) => (name: EnvVar, fallback: boolean) =>
  env[name] === undefined ? fallback : env[name] === "true";

async function read(env: Record<string, string>) {
  const errors: string[] = [];
  const config = await readRobotConfig(env, errors, bool(env));
  return { config, errors };
}

Deno.test("robot config: the official CCM's defaults, and nothing without ROBOT_ENABLED", async () => {
  const { config, errors } = await read({ ROBOT_USER: "u", ROBOT_PASSWORD: "p" });
  assertEquals(errors, []);
  assertEquals([config.enabled, config.user, config.forwardInternalIps], [false, undefined, false]);
  const on = await read({ ROBOT_ENABLED: "true", ROBOT_USER: "u", ROBOT_PASSWORD: "p" });
  assertEquals([on.config.cacheTimeoutMs, on.config.forwardInternalIps, on.config.endpoint], [
    300_000,
    true,
    "https://robot-ws.your-server.de",
  ]);
});

Deno.test("robot config: credentials both or neither, from files too, never shown in a message", async () => {
  const half = await read({ ROBOT_ENABLED: "true", ROBOT_USER: "u" });
  assertEquals(half.errors, ["ROBOT_USER and ROBOT_PASSWORD: set both (or their _FILE forms), or neither"]);
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/pw`, "s3cret-value\n");
  const files = await read({ ROBOT_ENABLED: "true", ROBOT_USER: "u", ROBOT_PASSWORD_FILE: `${dir}/pw` });
  assertEquals([files.errors, files.config.password], [[], "s3cret-value"]);
  const both = await read({
    ROBOT_ENABLED: "true",
    ROBOT_USER: "u",
    ROBOT_PASSWORD: "s3cret-value",
    ROBOT_PASSWORD_FILE: `${dir}/pw`,
    ROBOT_CACHE_TIMEOUT: "soon",
  });
  assertEquals(both.errors.length, 2);
  assert(both.errors.every((e) => !e.includes("s3cret")), both.errors.join("; "));
  assert(both.errors.some((e) => e.startsWith('ROBOT_CACHE_TIMEOUT: "soon"')));
  await Deno.remove(dir, { recursive: true });
});
