import { assert, assertEquals } from "../../../testing/assert.ts";
import { DEFAULT_ROBOT_ENDPOINT, readRobotConfig } from "./config.ts";
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
    DEFAULT_ROBOT_ENDPOINT,
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

Deno.test("robot config: the Syself chart's names (ROBOT_USER_NAME, the mounted Secret, bm- provider IDs)", async () => {
  const dir = await Deno.makeTempDir();
  const errors: string[] = [];
  const env = { ROBOT_ENABLED: "true", ROBOT_USER_NAME: "syself-user" };
  await Deno.writeTextFile(`${dir}/robot-password`, "from-mount\n");
  const config = await readRobotConfig(env, errors, bool(env), dir);
  assertEquals(errors, []);
  assertEquals([config.user, config.password, config.hrobotProviderIds], ["syself-user", "from-mount", true]);
  // A variable always wins over the mount; the alias and its original must agree.
  const both = { ...env, ROBOT_USER: "other", ROBOT_PASSWORD: "p" };
  const errs: string[] = [];
  const c2 = await readRobotConfig(both, errs, bool(both), dir);
  assertEquals(c2.password, "p");
  assertEquals(errs, [
    "ROBOT_USER and ROBOT_USER_NAME (its Syself name) are both set and differ: set only one of them",
  ]);
  const bm = { HCLOUD_USE_HROBOT_PROVIDER_ID_FOR_BAREMETAL: "false" };
  assertEquals((await readRobotConfig(bm, [], bool(bm), dir)).hrobotProviderIds, false);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("robot config: a hostile file at the Syself mount (FIFO, oversized) is refused naming it, never read", async () => {
  const dir = await Deno.makeTempDir();
  const env = { ROBOT_ENABLED: "true" };
  await new Deno.Command("mkfifo", { args: [`${dir}/robot-user`] }).output();
  await Deno.writeTextFile(`${dir}/robot-password`, "p".repeat(5000));
  const errors: string[] = [];
  const config = await readRobotConfig(env, errors, bool(env), dir);
  assertEquals(errors.length, 2, errors.join("; "));
  assert(
    errors[0].startsWith(
      `ROBOT_USER (unset, so read from the Syself chart's Secret mount): cannot read ${dir}/robot-user`,
    ) && /not a regular file/.test(errors[0]),
  );
  assert(
    errors[1].startsWith(
      `ROBOT_PASSWORD (unset, so read from the Syself chart's Secret mount): cannot read ${dir}/robot-password`,
    ) && /5000 bytes/.test(errors[1]),
  );
  assert(errors.every((e) => !e.includes("ppp")), "the content is never shown");
  assertEquals([config.user, config.password], [undefined, undefined]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("robot config: under the Syself chart (its mount holds both credentials, no variable) Robot is on with bm- provider IDs, as that chart's CCM", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/robot-user`, "syself-u\n");
  await Deno.writeTextFile(`${dir}/robot-password`, "syself-p\n");
  const read = async (env: Record<string, string>) => {
    const errors: string[] = [];
    const c = await readRobotConfig(env, errors, bool(env), dir);
    assertEquals(errors, []);
    return [c.enabled, c.user, c.hrobotProviderIds];
  };
  assertEquals(await read({}), [true, "syself-u", false]);
  // Either variable set says otherwise.
  assertEquals(await read({ ROBOT_ENABLED: "false" }), [false, undefined, true]);
  assertEquals(await read({ HCLOUD_USE_HROBOT_PROVIDER_ID_FOR_BAREMETAL: "true" }), [true, "syself-u", true]);
  assertEquals(
    await read({ ROBOT_ENABLED: "true" }),
    [true, "syself-u", true],
    "as the official CCM's setup",
  );
  // Only one credential in the mount: not that setup (and off, as before).
  await Deno.remove(`${dir}/robot-password`);
  assertEquals(await read({}), [false, undefined, true]);
  await Deno.remove(dir, { recursive: true });
});
