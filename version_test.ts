import { assertEquals } from "./testing/assert.ts";
import { parse as parseYaml } from "yaml";
import { main } from "./main.ts";
import { VERSION } from "./version.ts";

Deno.test("version: --version prints deno.json's version, the chart's appVersion, and exits 0", async () => {
  const printed: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => printed.push(args.join(" "));
  let code: number;
  try {
    code = await main(["--version"], {});
  } finally {
    console.log = log;
  }
  assertEquals([code, printed], [0, [`deno-ccm ${VERSION}`]]);
  const chart = parseYaml(await Deno.readTextFile(new URL("chart/Chart.yaml", import.meta.url))) as {
    appVersion: string;
  };
  assertEquals(VERSION, chart.appVersion);
});
