/**
 * The version of this build: deno.json's `version`, which a release checks equals the chart's `version`
 * and `appVersion` and the tag (hack/release_assets.ts). `--version` prints it; the startup log names it.
 *
 * @module
 */
import config from "./deno.json" with { type: "json" };

/** This build's version, e.g. `0.1.0`. */
export const VERSION: string = config.version;
