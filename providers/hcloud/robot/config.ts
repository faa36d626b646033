/**
 * Robot (dedicated root servers) settings: the official CCM's `ROBOT_*` variables with its names
 * and defaults, plus `ROBOT_ENDPOINT` (ours, for a simulator or proxy). Problems name the variable,
 * never a credential's value.
 *
 * @module
 */
import { readSecretFile } from "../../../lib/secret_file.ts";
import { parseDuration } from "../../../lib/duration.ts";
import type { EnvVar } from "../../../config/env.ts";

/**
 * Where the Syself chart mounts its Secret (`hetzner`: keys `hcloud`, `robot-user`, `robot-password`):
 * a credential no variable gives is read from here, as that chart's CCM does.
 */
export const SYSELF_SECRET_DIR = "/etc/hetzner-secret";

/** The Robot webservice. */
export const DEFAULT_ROBOT_ENDPOINT = "https://robot-ws.your-server.de";

/** What the provider needs to reach Robot. */
export interface RobotConfig {
  /**
   * `ROBOT_ENABLED`: Robot servers are Nodes of this cluster. Unset, and no variable naming a Robot
   * credential, it is on when the Syself mount holds both (that chart's CCM has no such switch).
   */
  enabled: boolean;
  /** Both or neither: without them Robot Nodes can only be targeted by their InternalIP. */
  user?: string;
  /** `ROBOT_PASSWORD` (or the Syself mount's), with `user`. */
  password?: string;
  /** `ROBOT_ENDPOINT` (default the Robot webservice). */
  endpoint: string;
  /** `ROBOT_CACHE_TIMEOUT` (default 5m): how long one server list serves every lookup. */
  cacheTimeoutMs: number;
  /** `ROBOT_RATE_LIMIT_WAIT_TIME`: no Robot call for this long after Robot's rate limit answered. */
  rateLimitWaitMs: number;
  /** `ROBOT_FORWARD_INTERNAL_IPS` (default true): keep the kubelet's InternalIPs on Robot Nodes. */
  forwardInternalIps: boolean;
  /**
   * `HCLOUD_USE_HROBOT_PROVIDER_ID_FOR_BAREMETAL` (the Syself name; default true, the official CCM's
   * form, but false when Robot is on by the Syself mount): false writes `hcloud://bm-<number>` on Robot
   * Nodes, the form Cluster API Provider Hetzner matches its Machines by. Both forms are always read; a
   * set provider ID is never rewritten.
   */
  hrobotProviderIds: boolean;
}

/** Reads the Robot settings, pushing problems (naming variables only) onto `errors`. */
export async function readRobotConfig(
  env: Record<string, string | undefined>,
  errors: string[],
  parseBool: (name: EnvVar, fallback: boolean) => boolean,
  syselfDir = SYSELF_SECRET_DIR,
): Promise<RobotConfig> {
  const str = (name: EnvVar) => (env[name] === "" ? undefined : env[name]);
  // The Syself chart's name for ROBOT_USER: an alias, refused when both are set and differ.
  const userName = str("ROBOT_USER_NAME");
  if (userName !== undefined && str("ROBOT_USER") !== undefined && userName !== str("ROBOT_USER")) {
    errors.push(
      "ROBOT_USER and ROBOT_USER_NAME (its Syself name) are both set and differ: set only one of them",
    );
  }
  const secret = async (name: "ROBOT_USER" | "ROBOT_PASSWORD") => {
    const direct = str(name) ?? (name === "ROBOT_USER" ? userName : undefined);
    let file = str(`${name}_FILE`);
    const fromMount = !file && direct === undefined;
    if (fromMount) file = await syselfFile(syselfDir, SYSELF_KEYS[name]);
    if (!file) return direct;
    if (direct !== undefined) {
      errors.push(`${name} and ${name}_FILE are both set: set only one of them`);
      return direct;
    }
    try {
      return (await readSecretFile(file)).trim() || undefined;
    } catch (err) {
      errors.push(
        `${fromMount ? SYSELF_SETTING(name) : `${name}_FILE`}: cannot read ${file}: ${
          secretFileProblem(err)
        }`,
      );
      return undefined;
    }
  };
  const duration = (name: EnvVar, fallback: number) => {
    const v = str(name);
    if (v === undefined) return fallback;
    const ms = parseDuration(v);
    if (ms === undefined || ms < 0) {
      errors.push(`${name}: "${v}" is not a duration like "5m" or "30s"`);
      return fallback;
    }
    return ms;
  };
  const user = await secret("ROBOT_USER");
  const password = await secret("ROBOT_PASSWORD");
  // The Syself chart's CCM has no ROBOT_ENABLED: it serves Robot whenever its mount holds both
  // credentials, and names Robot Nodes `hcloud://bm-<number>` (what CAPH matches its Machines by). Ours
  // swapped in under that chart does the same, so its bare-metal Nodes are not left uninitialized;
  // either variable set says otherwise.
  const named =
    (["ROBOT_USER", "ROBOT_USER_NAME", "ROBOT_PASSWORD", "ROBOT_USER_FILE", "ROBOT_PASSWORD_FILE"] as const)
      .some((n) => str(n) !== undefined);
  const syselfSetup = str("ROBOT_ENABLED") === undefined && !named && user !== undefined &&
    password !== undefined;
  const enabled = syselfSetup || parseBool("ROBOT_ENABLED", false);
  if (enabled && (user === undefined) !== (password === undefined)) {
    errors.push("ROBOT_USER and ROBOT_PASSWORD: set both (or their _FILE forms), or neither");
  }
  const endpoint = (str("ROBOT_ENDPOINT") ?? DEFAULT_ROBOT_ENDPOINT).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(endpoint)) errors.push(`ROBOT_ENDPOINT: "${endpoint}" is not an http(s) URL`);
  const cacheTimeoutMs = duration("ROBOT_CACHE_TIMEOUT", 300_000) || 300_000;
  return {
    enabled,
    user: enabled ? user : undefined,
    password: enabled ? password : undefined,
    endpoint,
    cacheTimeoutMs,
    // The official CCM's default is 0 (ask again at once); Robot's hourly limits refill slowly, so
    // knocking again at every reconcile only keeps the limit exhausted: wait 5 minutes by default.
    rateLimitWaitMs: duration("ROBOT_RATE_LIMIT_WAIT_TIME", 300_000),
    // As in the official CCM: only meaningful with Robot on.
    forwardInternalIps: enabled && parseBool("ROBOT_FORWARD_INTERNAL_IPS", true),
    hrobotProviderIds: parseBool("HCLOUD_USE_HROBOT_PROVIDER_ID_FOR_BAREMETAL", !syselfSetup),
  };
}

/** How a message names a credential read from the Syself mount (no variable named it). */
export const SYSELF_SETTING = (name: "HCLOUD_TOKEN" | "ROBOT_USER" | "ROBOT_PASSWORD"): string =>
  `${name} (unset, so read from the Syself chart's Secret mount)`;

/** The Syself Secret's key for each credential. */
export const SYSELF_KEYS = {
  ROBOT_USER: "robot-user",
  ROBOT_PASSWORD: "robot-password",
  HCLOUD_TOKEN: "hcloud",
};

/**
 * `<dir>/<key>` when it exists (the Syself chart's mounted Secret), else undefined: used only where no
 * variable names the credential.
 */
export async function syselfFile(
  dir: string,
  key: (typeof SYSELF_KEYS)[keyof typeof SYSELF_KEYS],
): Promise<string | undefined> {
  const path = `${dir}/${key}`;
  try {
    await Deno.stat(path);
    return path;
  } catch {
    return undefined;
  }
}

/** What went wrong reading a credential file: a limit's message, else only the error's name (no content). */
function secretFileProblem(err: unknown): string {
  const message = (err as Error).message ?? "";
  return / is not a regular file| bytes a credential can take| more than the /.test(message)
    ? message
    : (err as Error).name;
}
