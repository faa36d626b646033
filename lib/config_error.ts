/**
 * The one error type for bad configuration: flags, environment, kubeconfig.
 *
 * @module
 */

/** One or more configuration problems; every message names the field or file and the bad value. */
export class ConfigError extends Error {
  /** Each problem on its own. */
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[], options?: { cause?: unknown }) {
    const list = typeof problems === "string" ? [problems] : problems;
    super(
      list.length === 1 ? list[0] : `${list.length} configuration errors:\n  - ${list.join("\n  - ")}`,
      options,
    );
    this.name = "ConfigError";
    this.problems = list;
  }
}
