/**
 * The Robot room: the Robot webservice client, its configuration, and one cached server list.
 *
 * @module
 */
export { RobotClient, type RobotServerInfo } from "./client.ts";
export {
  readRobotConfig,
  type RobotConfig,
  SYSELF_KEYS,
  SYSELF_SECRET_DIR,
  SYSELF_SETTING,
  syselfFile,
} from "./config.ts";
export { RobotServers, type RobotSnapshot } from "./servers.ts";
/** The environment variables the configuration may read (`config/env.ts`). */
export { ENV_VARS, type EnvVar } from "../../../config/env.ts";
