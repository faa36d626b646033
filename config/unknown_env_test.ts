import { assert, assertEquals } from "../testing/assert.ts";
import { environmentNames, unknownEnvWarnings } from "./unknown_env.ts";

Deno.test("unknown env: a misspelled variable of ours is named with the one it misspells; others are not ours to judge (Q12)", () => {
  assertEquals(
    unknownEnvWarnings([
      "HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECT_NAMESPACES",
      "HCLOUD_TOKEN",
      "PATH",
      "HTTPS_PROXY",
      "ROBOT_PASWORD",
      "HCLOUD_SOMETHING_ELSE_ENTIRELY",
    ]),
    [
      "environment variable HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECT_NAMESPACES is not read by deno-ccm " +
      "(did you mean HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES?): it has no effect",
      "environment variable HCLOUD_SOMETHING_ELSE_ENTIRELY is not read by deno-ccm: it has no effect",
      "environment variable ROBOT_PASWORD is not read by deno-ccm (did you mean ROBOT_PASSWORD?): it has no effect",
    ],
  );
});

Deno.test("unknown env: the names are the chart's list and, where allowed, the environment's", () => {
  const names = environmentNames({ DENO_CCM_ENV_NAMES: "HCLOUD_TOKEN, HCLOUD_TYPO" });
  assert(names.includes("HCLOUD_TYPO") && names.includes("HCLOUD_TOKEN"), names.join(","));
  assert(names.includes("PATH") || names.includes("HOME"), "this test runs with -A: the environment too");
});
